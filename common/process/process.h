// Process-level helpers shared by both binaries: the readiness line and the shutdown wait.
#pragma once

#include "nlohmann/json.hpp"

namespace meshwork {

// Blocks SIGINT and SIGTERM in the calling thread (call before starting any thread, so every
// thread inherits the mask) .
void BlockShutdownSignals();
// Waits for SIGINT or SIGTERM; returns the signal number.
int WaitForShutdownSignal();

// Like BlockShutdownSignals, and also blocks SIGHUP (the reload request) so that
// WaitForShutdownOrReloadSignal can take it.
void BlockShutdownAndReloadSignals();
// Waits for SIGINT, SIGTERM or SIGHUP; returns the signal number.
int WaitForShutdownOrReloadSignal();

// Prints `READY {json}` on stdout and flushes: tests and tools start a binary on port 0 and
// read the bound addresses from this line.
void AnnounceReady(const nlohmann::json& listeners);

}  // namespace meshwork

namespace meshwork {
// Rewrites `--flag-name=value` to `--flag_name=value` in place (the documented flags use
// dashes; Abseil's use underscores). Values are left untouched.
void NormalizeFlagNames(int argc, char** argv);

// Process-wide runtime settings for the servers: Abseil's mutex deadlock detection (a debug
// aid that costs a graph lookup on every lock) is turned off.
void ConfigureServerRuntime();
}  // namespace meshwork
