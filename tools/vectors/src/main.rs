//! Rewrites the test vectors under `spec/vectors/`: `cargo run -p bloomwire-vectors`.

fn main() -> std::io::Result<()> {
    let dir = bloomwire_vectors::vectors_dir();
    for sub in ["accept", "reject"] {
        let d = dir.join(sub);
        if d.exists() {
            std::fs::remove_dir_all(&d)?;
        }
        std::fs::create_dir_all(&d)?;
    }
    let files = bloomwire_vectors::generate();
    for f in &files {
        std::fs::write(dir.join(&f.path), &f.bytes)?;
    }
    println!("wrote {} files to {}", files.len(), dir.display());
    Ok(())
}
