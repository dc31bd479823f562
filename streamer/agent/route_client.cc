#include "streamer/agent/route_client.h"

#include "absl/strings/str_cat.h"
#include "grpcpp/grpcpp.h"

namespace meshwork::streamer {

struct RouteClient::Call {
  grpc::ClientContext context;
  v1::RouteRequest request;
  v1::RouteResponse response;
  std::shared_ptr<v1::Routing::Stub> stub;  // kept for the call's length
  Done done;
};

RouteClient::RouteClient(std::function<std::string()> central, std::function<std::string()> token,
                         std::chrono::milliseconds deadline)
    : central_(std::move(central)), token_(std::move(token)), deadline_(deadline) {}

RouteClient::~RouteClient() { Stop(); }

void RouteClient::Stop() {
  absl::MutexLock lock(&mu_);
  stopping_ = true;
  for (Call* call : calls_) call->context.TryCancel();
  auto drained = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return calls_.empty(); };
  mu_.Await(absl::Condition(&drained));
}

void RouteClient::Route(v1::RouteRequest request, Done done) {
  const std::string address = central_();
  auto call = std::make_unique<Call>();
  bool refused = false;
  {
    absl::MutexLock lock(&mu_);
    refused = stopping_ || address.empty();
    if (!refused) {
      if (address != address_ || !stub_) {
        address_ = address;
        stub_ =
            v1::Routing::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
      }
      call->stub = stub_;
      calls_.insert(call.get());
    }
  }
  // Outside the lock: `done` may answer an HTTP request.
  if (refused) return done(absl::UnavailableError("no central to ask"));
  call->request = std::move(request);
  call->done = std::move(done);
  call->context.set_deadline(std::chrono::system_clock::now() + deadline_);
  const std::string token = token_ ? token_() : "";
  call->context.AddMetadata("authorization", "Bearer " + token);
  Call* raw = call.release();
  raw->stub->async()->Route(
      &raw->context, &raw->request, &raw->response, [this, raw](grpc::Status status) {
        absl::StatusOr<v1::RouteResponse> result = raw->response;
        if (!status.ok()) {
          result = absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                                absl::StrCat("central's Route: ", status.error_message()));
        }
        raw->done(std::move(result));
        Finish(raw);
      });
}

void RouteClient::Finish(Call* call) {
  std::unique_ptr<Call> owned(call);
  absl::MutexLock lock(&mu_);
  calls_.erase(call);
}

}  // namespace meshwork::streamer
