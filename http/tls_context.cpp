#include "http/tls_context.hpp"

#include <boost/system/system_error.hpp>
#include <filesystem>

#include "common/error.hpp"

namespace scalebench {

namespace ssl = boost::asio::ssl;

namespace {
std::shared_ptr<ssl::context> modern_context(ssl::context::method method) {
  auto ctx = std::make_shared<ssl::context>(method);
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                   ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 | ssl::context::single_dh_use);
  return ctx;
}

// OpenSSL's message for a file it could not load, with the file's name (and whether it exists).
[[noreturn]] void file_error(const std::string& what, const std::string& path, const boost::system::error_code& ec) {
  std::error_code fs_ec;
  const bool exists = std::filesystem::exists(path, fs_ec);
  throw Error(what + " " + path + ": " + (exists ? ec.message() : std::string("no such file")));
}
}  // namespace

std::shared_ptr<ssl::context> make_tls_server_context(const std::string& cert_file, const std::string& key_file) {
  auto ctx = modern_context(ssl::context::tls_server);
  boost::system::error_code ec;
  ctx->use_certificate_chain_file(cert_file, ec);
  if (ec) file_error("TLS certificate", cert_file, ec);
  ctx->use_private_key_file(key_file, ssl::context::pem, ec);
  if (ec) file_error("TLS private key", key_file, ec);
  if (SSL_CTX_check_private_key(ctx->native_handle()) != 1)
    throw Error("TLS private key " + key_file + " does not belong to the certificate in " + cert_file);
  return ctx;
}

std::shared_ptr<ssl::context> make_tls_client_context(const std::string& ca_file) {
  auto ctx = modern_context(ssl::context::tls_client);
  boost::system::error_code ec;
  if (ca_file.empty())
    ctx->set_default_verify_paths(ec);
  else
    ctx->load_verify_file(ca_file, ec);
  if (ec) file_error("TLS CA file", ca_file.empty() ? "(system default)" : ca_file, ec);
  ctx->set_verify_mode(ssl::verify_peer);
  return ctx;
}

}  // namespace scalebench
