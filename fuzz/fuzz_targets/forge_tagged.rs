#![no_main]
bloomwire_fuzz::target!(forge_tagged);
