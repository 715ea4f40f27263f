#pragma once
#include <boost/asio/ssl/context.hpp>
#include <memory>
#include <string>

namespace scalebench {

// TLS for the API (OpenSSL through Boost.Asio), TLS 1.2 or newer on both ends.

// The coordinator's: a PEM certificate chain and its private key. Throws Error naming the file
// OpenSSL could not use, and OpenSSL's reason.
std::shared_ptr<boost::asio::ssl::context> make_tls_server_context(const std::string& cert_file,
                                                                   const std::string& key_file);

// A client's: the server's certificate must chain to `ca_file` (PEM), or, when it is empty, to
// the system's trusted certificates. Throws Error naming an unusable file.
std::shared_ptr<boost::asio::ssl::context> make_tls_client_context(const std::string& ca_file);

}  // namespace scalebench
