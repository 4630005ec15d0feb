#![no_main]
bloomwire_fuzz::target!(dense_twins);
