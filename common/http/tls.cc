#include "common/http/tls.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <cstdio>

#include "absl/strings/str_cat.h"

namespace meshwork::http {

namespace ssl = boost::asio::ssl;

namespace {

// The most recent OpenSSL error on this thread as text (or `fallback`), clearing the queue.
std::string OpenSslError(const std::string& fallback) {
  unsigned long code = ERR_get_error();
  std::string text = fallback;
  if (code != 0) {
    char buf[256];
    ERR_error_string_n(code, buf, sizeof buf);
    text = buf;
  }
  ERR_clear_error();
  return text;
}

// ALPN (RFC 7301): "h2" when the client offers it (S-24), else "http/1.1"; a client that
// offers neither gets no ALPN answer and speaks HTTP/1.1.
int SelectAlpn(SSL*, const unsigned char** out, unsigned char* outlen, const unsigned char* in,
               unsigned int inlen, void*) {
  static constexpr unsigned char kServer[] = "\x02h2\x08http/1.1";
  unsigned char* selected = nullptr;
  if (SSL_select_next_proto(&selected, outlen, kServer, sizeof(kServer) - 1, in, inlen) !=
      OPENSSL_NPN_NEGOTIATED) {
    return SSL_TLSEXT_ERR_NOACK;
  }
  *out = selected;
  return SSL_TLSEXT_ERR_OK;
}

}  // namespace

absl::StatusOr<std::shared_ptr<ssl::context>> LoadServerTlsContext(const std::string& cert_file,
                                                                   const std::string& key_file) {
  if (cert_file.empty() || key_file.empty()) {
    return absl::InvalidArgumentError("TLS needs both a certificate file and a key file");
  }
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                   ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 |
                   ssl::context::single_dh_use);
  // TLS 1.2 renegotiation: refused (the refusal's alert is output made while reading, which
  // tls_stream.h caps).
  SSL_CTX_set_options(ctx->native_handle(), SSL_OP_NO_RENEGOTIATION);
  if (SSL_CTX_set_min_proto_version(ctx->native_handle(), TLS1_2_VERSION) != 1) {
    return absl::InternalError(
        absl::StrCat("cannot require TLS 1.2: ", OpenSslError("unknown error")));
  }
  boost::system::error_code ec;
  ctx->use_certificate_chain_file(cert_file, ec);
  if (ec) {
    ERR_clear_error();
    return absl::InvalidArgumentError(
        absl::StrCat("cannot load TLS certificate \"", cert_file, "\": ", ec.message()));
  }
  ctx->use_private_key_file(key_file, ssl::context::pem, ec);
  if (ec) {
    ERR_clear_error();
    return absl::InvalidArgumentError(
        absl::StrCat("cannot load TLS private key \"", key_file, "\": ", ec.message()));
  }
  if (SSL_CTX_check_private_key(ctx->native_handle()) != 1) {
    return absl::InvalidArgumentError(absl::StrCat("TLS private key \"", key_file,
                                                   "\" does not match certificate \"", cert_file,
                                                   "\": ", OpenSslError("mismatch")));
  }
  SSL_CTX_set_alpn_select_cb(ctx->native_handle(), &SelectAlpn, nullptr);
  return ctx;
}

absl::StatusOr<std::vector<std::string>> CertificateDnsNames(const std::string& cert_file) {
  std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(cert_file.c_str(), "r"), &std::fclose);
  if (!file) {
    return absl::InvalidArgumentError(absl::StrCat("cannot open certificate ", cert_file));
  }
  std::unique_ptr<X509, void (*)(X509*)> cert(PEM_read_X509(file.get(), nullptr, nullptr, nullptr),
                                              &X509_free);
  if (!cert) {
    return absl::InvalidArgumentError(absl::StrCat("no PEM certificate in ", cert_file));
  }
  std::vector<std::string> names;
  auto* sans = static_cast<GENERAL_NAMES*>(
      X509_get_ext_d2i(cert.get(), NID_subject_alt_name, nullptr, nullptr));
  if (sans) {
    for (int i = 0; i < sk_GENERAL_NAME_num(sans); ++i) {
      const GENERAL_NAME* name = sk_GENERAL_NAME_value(sans, i);
      if (name->type != GEN_DNS) continue;
      const ASN1_IA5STRING* dns = name->d.dNSName;
      names.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(dns)),
                         static_cast<size_t>(ASN1_STRING_length(dns)));
    }
    GENERAL_NAMES_free(sans);
  }
  if (names.empty()) {
    char cn[256] = {0};
    int n =
        X509_NAME_get_text_by_NID(X509_get_subject_name(cert.get()), NID_commonName, cn, sizeof cn);
    if (n > 0) names.emplace_back(cn, static_cast<size_t>(n));
  }
  return names;
}

}  // namespace meshwork::http
