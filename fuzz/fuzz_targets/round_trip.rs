#![no_main]
bloomwire_fuzz::target!(round_trip);
