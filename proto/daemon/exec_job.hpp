// One `exec` call of one client: asks the supervisor, subscribes to the execution's live
// output and turns it into exec.started / exec.output notifications, then the response.
// Linked to its connection actor: when the client goes, the job goes, and the execution
// (which monitors the job as its caller) is cancelled and cleaned up.
//
//   job_cancel_atom  -> cancels the execution (now, or as soon as it has started)
//   to the connection: (rpc_out_atom, line) for notifications, (rpc_out_atom, line,
//   collector, bytes) for output (acknowledged to the collector once queued), and
//   (job_done_atom, key, line)
#pragma once

#include <string>

#include <caf/actor.hpp>
#include <caf/event_based_actor.hpp>
#include <nlohmann/json.hpp>

#include "proto/jsonrpc/exec_params.hpp"

namespace corral {

caf::behavior exec_job(caf::event_based_actor* self, caf::actor connection, caf::actor supervisor,
                       exec_params params, nlohmann::json id, std::string key);

// Splits live bytes at UTF-8 character boundaries: a character cut across two chunks is
// held back (at most 3 bytes) until the rest arrives, so each notification's text is whole.
class utf8_carry {
public:
  std::string take(const std::string& bytes);  // what can be sent now
  std::string flush();                         // whatever is still held, at the end
private:
  std::string held_;
};

// exec.output params for one piece: "data" always (valid UTF-8), plus "data_base64"
// with the exact bytes when they are not valid UTF-8.
nlohmann::json output_notification(const nlohmann::json& id, const std::string& stream, const std::string& bytes);

} // namespace corral
