#![no_main]
bloomwire_fuzz::target!(optimizer);
