#![no_main]
bloomwire_fuzz::target!(kernel_twins);
