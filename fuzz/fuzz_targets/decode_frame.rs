#![no_main]
bloomwire_fuzz::target!(decode_frame);
