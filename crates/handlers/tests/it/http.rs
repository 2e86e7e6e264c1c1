//! HTTP hooks against real receivers on 127.0.0.1.
