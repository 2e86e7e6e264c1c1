//! HTTP webhook hooks (filled in by the http work).
