// TLS server contexts for HTTPS listeners (OpenSSL through Boost.Asio).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "boost/asio/ssl/context.hpp"

namespace meshwork::http {

// A server context speaking TLS 1.2 and later, with the PEM certificate chain `cert_file`
// and the PEM private key `key_file`. InvalidArgument when either file cannot be read or
// parsed, or when the key does not belong to the certificate.
absl::StatusOr<std::shared_ptr<boost::asio::ssl::context>> LoadServerTlsContext(
    const std::string& cert_file, const std::string& key_file);

// The DNS names a PEM certificate covers: its subject alternative names of type DNS, or its
// subject common name when it has none (O-13). InvalidArgument when the file is unreadable.
absl::StatusOr<std::vector<std::string>> CertificateDnsNames(const std::string& cert_file);

}  // namespace meshwork::http
