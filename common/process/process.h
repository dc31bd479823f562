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

// P-7: large buffers (segments and parts, 0.1–4 MiB) are taken from malloc's heap instead of a
// mapping each, and up to `keep_bytes` of freed heap stays mapped: a segment made after the
// window's oldest was freed reuses its pages instead of faulting in fresh zeroed ones (with
// glibc's defaults about half of them were fresh; the page faults were 15 % of the packaging
// profile). The cost: after a peak, up to `keep_bytes` of free memory stays resident. 0 keeps
// glibc's defaults. Call before starting threads. Returns false when malloc refused a setting
// (not glibc, or out of its range).
bool RetainHeapMemory(size_t keep_bytes);
}  // namespace meshwork
