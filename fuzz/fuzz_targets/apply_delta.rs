#![no_main]
bloomwire_fuzz::target!(apply_delta);
