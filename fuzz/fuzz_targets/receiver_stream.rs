#![no_main]
bloomwire_fuzz::target!(receiver_stream);
