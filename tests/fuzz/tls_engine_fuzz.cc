// T-6, P-15: the server side of TLS (TlsEngine, common/http/tls_stream.h — our BIO between
// the socket and OpenSSL) fed arbitrary ciphertext, cut in pieces of a size the first byte
// picks, as a socket would deliver it: handshake steps, then reads, writes of what was read,
// output taken and sent, buffers trimmed between pieces. A random input rarely gets past the
// ClientHello (the seed is a real one); what runs is OpenSSL's record and handshake parsing
// behind our input buffer's compaction and our output buffers. Properties: no crash, no leak,
// every step ends in data, "more input" or an error, and after an error nothing more is read.
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "common/http/tls_stream.h"

namespace {

// A server context with a self-signed P-256 certificate made in memory, once.
SSL_CTX* Context() {
  static SSL_CTX* const ctx = [] {
    EVP_PKEY* key = EVP_EC_gen("P-256");
    X509* cert = X509_new();
    if (key == nullptr || cert == nullptr) std::abort();
    X509_set_version(cert, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
    X509_gmtime_adj(X509_getm_notBefore(cert), 0);
    X509_gmtime_adj(X509_getm_notAfter(cert), 86400);
    X509_set_pubkey(cert, key);
    X509_NAME* name = X509_get_subject_name(cert);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                               reinterpret_cast<const unsigned char*>("fuzz"), -1, -1, 0);
    X509_set_issuer_name(cert, name);
    if (X509_sign(cert, key, EVP_sha256()) == 0) std::abort();
    SSL_CTX* c = SSL_CTX_new(TLS_server_method());
    if (c == nullptr || SSL_CTX_use_certificate(c, cert) != 1 ||
        SSL_CTX_use_PrivateKey(c, key) != 1) {
      std::abort();
    }
    SSL_CTX_set_min_proto_version(c, TLS1_2_VERSION);
    SSL_CTX_set_options(c, SSL_OP_NO_RENEGOTIATION);
    X509_free(cert);
    EVP_PKEY_free(key);
    return c;
  }();
  return ctx;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using meshwork::http::tls_internal::TlsEngine;
  if (size == 0) return 0;
  size_t piece = 1 + static_cast<size_t>(data[0]) * 67;  // 1 … 17 086 bytes at a time
  ++data;
  --size;
  TlsEngine engine(Context());
  bool handshaken = false;
  size_t at = 0;
  char plain[4096];
  while (at < size) {
    auto space = engine.InputSpace();
    size_t n = std::min({space.size(), piece, size - at});
    if (n == 0) std::abort();  // OpenSSL left the input buffer full: a bug of ours
    std::memcpy(space.data(), data + at, n);
    engine.Received(n);
    at += n;
    for (;;) {  // every step the engine can take with what it has
      TlsEngine::Step step =
          handshaken ? engine.Read(boost::asio::buffer(plain, sizeof plain)) : engine.Handshake();
      if (step.ec) return 0;  // an error ends the connection
      if (step.want_input) break;
      if (!handshaken) {
        handshaken = true;
        continue;
      }
      if (step.bytes == 0) break;
      engine.StartPack();
      engine.Pack(plain, step.bytes);
      if (engine.Seal()) return 0;
    }
    if (engine.HasOutput()) {
      engine.TakeOutput();
      engine.Sent();
    }
    engine.TrimIdle();
  }
  return 0;
}
