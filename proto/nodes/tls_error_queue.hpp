// A repair for CAF 0.17's OpenSSL module, which every node connection goes through.
//
// OpenSSL requires the calling thread's error queue to be empty before SSL_read,
// SSL_write, SSL_connect or SSL_accept, or SSL_get_error misreports the outcome. CAF's
// session never clears it, and every connection shares the middleman's one I/O thread:
// after one connection failed (a node killed mid-stream, a caller refused for its
// certificate) its error stayed queued, and the next "would block" on any other
// connection was read as fatal, closing it too. So a dead node took the survivors'
// connections down, and a refused stranger could cut off legitimate callers.
//
// This unit defines those four functions in the program, ahead of libssl in symbol
// lookup: each clears the queue, then calls libssl's own.
#pragma once

namespace corral {

// Referencing this links the repair into the program (a static library only
// contributes the object files something refers to). Returns whether the wrappers are
// the ones the dynamic linker resolved SSL_read to.
bool tls_error_queue_repaired();

} // namespace corral
