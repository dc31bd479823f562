#include "central/etcd/etcd_client.h"

#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/log/log.h"

namespace meshwork::central::etcd {
namespace {

absl::StatusOr<std::string> ReadFile(const std::string& path, absl::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InvalidArgumentError(absl::StrCat("cannot read ", what, " ", path));
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// Codes worth another endpoint: the member is down, slow, or has lost its leader (etcd says
// "no leader" or "request timed out" as Unavailable).
bool Retryable(const grpc::Status& s) {
  return s.error_code() == grpc::StatusCode::UNAVAILABLE ||
         s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED;
}

bool TokenRejected(const grpc::Status& s) {
  return s.error_code() == grpc::StatusCode::UNAUTHENTICATED ||
         absl::StrContains(s.error_message(), "invalid auth token");
}

absl::Status FromGrpc(const grpc::Status& s, absl::string_view what) {
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()),
                      absl::StrCat("etcd ", what, ": ", s.error_message()));
}

}  // namespace

std::vector<std::string> ParseEndpoints(const std::string& list) {
  std::vector<std::string> out;
  for (absl::string_view part : absl::StrSplit(list, ',', absl::SkipWhitespace())) {
    part = absl::StripAsciiWhitespace(part);
    if (!absl::ConsumePrefix(&part, "http://")) absl::ConsumePrefix(&part, "https://");
    absl::ConsumeSuffix(&part, "/");
    if (!part.empty()) out.emplace_back(part);
  }
  return out;
}

std::string NormalizedPrefix(std::string prefix) {
  if (prefix.empty() || prefix.back() != '/') prefix += '/';
  return prefix;
}

std::string PrefixEnd(const std::string& prefix) {
  std::string end = prefix;
  while (!end.empty()) {
    if (static_cast<unsigned char>(end.back()) < 0xff) {
      end.back() = static_cast<char>(static_cast<unsigned char>(end.back()) + 1);
      return end;
    }
    end.pop_back();
  }
  return std::string(1, '\0');  // every key
}

EtcdClient::EtcdClient(EtcdOptions options) : options_(std::move(options)) {}

absl::StatusOr<std::unique_ptr<EtcdClient>> EtcdClient::Connect(EtcdOptions options) {
  if (options.endpoints.empty()) return absl::InvalidArgumentError("no etcd endpoint given");
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
  if (!options.ca_file.empty()) {
    grpc::SslCredentialsOptions ssl;
    auto ca = ReadFile(options.ca_file, "etcd CA file");
    if (!ca.ok()) return ca.status();
    ssl.pem_root_certs = *ca;
    if (!options.cert_file.empty()) {
      auto cert = ReadFile(options.cert_file, "etcd client certificate");
      if (!cert.ok()) return cert.status();
      auto key = ReadFile(options.key_file, "etcd client key");
      if (!key.ok()) return key.status();
      ssl.pem_cert_chain = *cert;
      ssl.pem_private_key = *key;
    }
    credentials = grpc::SslCredentials(ssl);
  }
  std::unique_ptr<EtcdClient> client(new EtcdClient(std::move(options)));
  for (const auto& endpoint : client->options_.endpoints) {
    grpc::ChannelArguments args;
    // A member that comes back is found again within about a second. (gRPC's minimum
    // reconnect backoff, also its connect timeout, stays at its default: etcd's port
    // multiplexer can take seconds to answer a new connection's HTTP/2 preface.)
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 200);
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
    // A watch on a connection that died without a reset (a partition) would wait forever:
    // pings find it within 15 s. etcd accepts pings every 5 s or slower while a stream is
    // open (its --grpc-keepalive-min-time default), and a watch is always open.
    args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 10000);
    args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 5000);
    args.SetMaxReceiveMessageSize(64 << 20);
    client->channels_.push_back(grpc::CreateCustomChannel(endpoint, credentials, args));
  }
  if (!client->options_.user.empty()) {
    if (absl::Status s = client->Authenticate(); !s.ok()) return s;
  }
  return client;
}

void EtcdClient::Prepare(grpc::ClientContext& context, std::chrono::milliseconds timeout) {
  if (timeout.count() > 0) context.set_deadline(std::chrono::system_clock::now() + timeout);
  absl::MutexLock lock(&mu_);
  if (!token_.empty()) context.AddMetadata("token", token_);
}

absl::Status EtcdClient::Authenticate() {
  etcdserverpb::AuthenticateRequest request;
  request.set_name(options_.user);
  request.set_password(options_.password);
  etcdserverpb::AuthenticateResponse response;
  grpc::Status last;
  for (size_t i = 0; i < channels_.size(); ++i) {
    size_t at = (current_.load() + i) % channels_.size();
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + options_.request_timeout);
    last = etcdserverpb::Auth::NewStub(channels_[at])->Authenticate(&context, request, &response);
    if (last.ok()) {
      absl::MutexLock lock(&mu_);
      token_ = response.token();
      return absl::OkStatus();
    }
    if (!Retryable(last)) break;
  }
  return FromGrpc(last, "authentication as " + options_.user);
}

absl::Status EtcdClient::Unary(
    const std::string& what,
    const std::function<grpc::Status(const std::shared_ptr<grpc::Channel>&, grpc::ClientContext&)>&
        call) {
  grpc::Status last;
  bool reauthenticated = false;
  const size_t start = current_.load();
  for (size_t i = 0; i < channels_.size(); ++i) {
    const size_t at = (start + i) % channels_.size();
    grpc::ClientContext context;
    Prepare(context, options_.request_timeout);
    last = call(channels_[at], context);
    if (last.ok()) {
      current_.store(at);
      return absl::OkStatus();
    }
    if (TokenRejected(last) && !options_.user.empty() && !reauthenticated) {
      reauthenticated = true;
      if (Authenticate().ok()) {
        --i;  // the same endpoint again, with the new token
        continue;
      }
    }
    if (!Retryable(last)) return FromGrpc(last, what);
  }
  return absl::UnavailableError(absl::StrCat("etcd is unavailable (", what, " failed on all ",
                                             channels_.size(),
                                             " endpoints; last: ", last.error_message(), ")"));
}

absl::StatusOr<etcdserverpb::RangeResponse> EtcdClient::Range(
    const etcdserverpb::RangeRequest& request) {
  etcdserverpb::RangeResponse response;
  absl::Status s = Unary("range", [&](const auto& channel, grpc::ClientContext& context) {
    return etcdserverpb::KV::NewStub(channel)->Range(&context, request, &response);
  });
  if (!s.ok()) return s;
  return response;
}

absl::StatusOr<etcdserverpb::TxnResponse> EtcdClient::Txn(const etcdserverpb::TxnRequest& request) {
  etcdserverpb::TxnResponse response;
  absl::Status s = Unary("transaction", [&](const auto& channel, grpc::ClientContext& context) {
    return etcdserverpb::KV::NewStub(channel)->Txn(&context, request, &response);
  });
  if (!s.ok()) return s;
  return response;
}

absl::StatusOr<etcdserverpb::PutResponse> EtcdClient::Put(const etcdserverpb::PutRequest& request) {
  etcdserverpb::PutResponse response;
  absl::Status s = Unary("put", [&](const auto& channel, grpc::ClientContext& context) {
    return etcdserverpb::KV::NewStub(channel)->Put(&context, request, &response);
  });
  if (!s.ok()) return s;
  return response;
}

absl::Status EtcdClient::Compact(int64_t revision) {
  etcdserverpb::CompactionRequest request;
  request.set_revision(revision);
  etcdserverpb::CompactionResponse response;
  return Unary("compact", [&](const auto& channel, grpc::ClientContext& context) {
    return etcdserverpb::KV::NewStub(channel)->Compact(&context, request, &response);
  });
}

absl::StatusOr<int64_t> EtcdClient::GrantLease(std::chrono::seconds ttl) {
  etcdserverpb::LeaseGrantRequest request;
  request.set_ttl(ttl.count());
  etcdserverpb::LeaseGrantResponse response;
  absl::Status s = Unary("lease grant", [&](const auto& channel, grpc::ClientContext& context) {
    return etcdserverpb::Lease::NewStub(channel)->LeaseGrant(&context, request, &response);
  });
  if (!s.ok()) return s;
  if (!response.error().empty()) return absl::UnavailableError("etcd lease: " + response.error());
  return response.id();
}

absl::Status EtcdClient::KeepAlive(int64_t lease) {
  etcdserverpb::LeaseKeepAliveResponse response;
  absl::Status s =
      Unary("lease keep-alive", [&](const auto& channel, grpc::ClientContext& context) {
        auto stream = etcdserverpb::Lease::NewStub(channel)->LeaseKeepAlive(&context);
        etcdserverpb::LeaseKeepAliveRequest request;
        request.set_id(lease);
        if (stream->Write(request)) stream->Read(&response);
        stream->WritesDone();
        return stream->Finish();
      });
  if (!s.ok()) return s;
  if (response.ttl() <= 0)
    return absl::NotFoundError(absl::StrCat("etcd lease ", lease, " expired"));
  return absl::OkStatus();
}

absl::Status EtcdClient::RevokeLease(int64_t lease) {
  etcdserverpb::LeaseRevokeRequest request;
  request.set_id(lease);
  etcdserverpb::LeaseRevokeResponse response;
  return Unary("lease revoke", [&](const auto& channel, grpc::ClientContext& context) {
    return etcdserverpb::Lease::NewStub(channel)->LeaseRevoke(&context, request, &response);
  });
}

absl::Status EtcdClient::Watch(
    const std::string& key, const std::string& range_end, int64_t start_revision,
    const std::function<bool(const etcdserverpb::WatchResponse&)>& on_response) {
  grpc::ClientContext context;
  Prepare(context, std::chrono::milliseconds(0));
  // A member cut off from its cluster's leader ends the watch instead of going quiet.
  context.AddMetadata("hasleader", "true");
  {
    absl::MutexLock lock(&mu_);
    if (cancelled_) return absl::CancelledError("etcd watches are cancelled");
    watches_.push_back(&context);
  }
  const size_t at = current_.load() % channels_.size();
  auto stream = etcdserverpb::Watch::NewStub(channels_[at])->Watch(&context);
  etcdserverpb::WatchRequest request;
  auto* create = request.mutable_create_request();
  create->set_key(key);
  create->set_range_end(range_end);
  create->set_start_revision(start_revision);
  create->set_progress_notify(true);
  bool ended_by_caller = false;
  if (stream->Write(request)) {
    etcdserverpb::WatchResponse response;
    while (stream->Read(&response)) {
      if (!on_response(response)) {
        ended_by_caller = true;
        context.TryCancel();
        break;
      }
    }
  }
  grpc::Status status = stream->Finish();
  bool cancelled;
  {
    absl::MutexLock lock(&mu_);
    std::erase(watches_, &context);
    cancelled = cancelled_;
  }
  if (ended_by_caller || cancelled) return absl::OkStatus();
  // The next watch starts on the next endpoint.
  current_.store((at + 1) % channels_.size());
  if (status.ok()) return absl::UnavailableError("etcd ended the watch");
  return FromGrpc(status, "watch");
}

void EtcdClient::CancelWatches() {
  absl::MutexLock lock(&mu_);
  cancelled_ = true;
  for (grpc::ClientContext* context : watches_) context->TryCancel();
}

}  // namespace meshwork::central::etcd
