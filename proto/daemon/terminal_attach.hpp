// A workspace's terminals from the daemon's side: workspace.attach (view a terminal the
// workspace keeps, or write to it), session.detach (stop viewing; it lives on), and the
// writer's place lost to another client's take-over. The terminal belongs to the
// workspace (actors/workspaces/registry_terminals.cpp), so any connection of the owner's
// uid may attach; the one-writer rule is kept here, where input comes in.
#pragma once

#include <string>

#include "actors/sessions/session_messages.hpp"
#include "proto/daemon/client_replies.hpp"
#include "proto/jsonrpc/jsonrpc.hpp"

namespace corral {

// workspace.attach {workspace, terminal?, writer?, take_over?}: the latest terminal when
// none is named; as the writer unless writer is false; a writer already attached elsewhere
// refuses unless take_over. Answers {session, terminal, workspace, writer}, then the
// scrollback comes as session.output, then the terminal live.
void attach_terminal(connection_self self, const rpc::request& r);

// session.detach {session}: a workspace's terminal only (others are closed, not left).
void session_detach(connection_self self, const rpc::request& r);

// Stops viewing every workspace terminal this connection views, and forgets them: the
// client hung up or went, and they live on without it.
void detach_terminals(connection_self self);

// Why a viewer may not `what` (write to, resize) its terminal.
failure viewer_only(const client_session& s, const char* what);

void relay(connection_self self, terminal_demoted& d);

} // namespace corral
