#include "runner/ssh/host_key.h"

#include <cstdlib>
#include <string_view>

#include "core/strings.h"
#include "core/user_file.h"
#include "runner/ssh/libssh_handles.h"

namespace rackchaos::ssh {
namespace {

struct KnownHostsEntryDeleter {
  void operator()(ssh_knownhosts_entry* e) const { ssh_knownhosts_entry_free(e); }
};

std::string KeyType(ssh_key key) {
  const char* t = key ? ssh_key_type_to_char(ssh_key_type(key)) : nullptr;
  return t ? t : "unknown-type";
}

std::string KnownHostsFileName(const HostSpec& host) {
  return host.known_hosts_file.empty() ? "~/.ssh/known_hosts" : host.known_hosts_file;
}

// "ssh-ed25519 key SHA256:..." for the key the server offers.
std::string DescribeKey(ssh_key key) { return KeyType(key) + " key " + KeyFingerprint(key); }

// The keys the known_hosts file records for the host, described like DescribeKey ("a different
// key" when none is found there, e.g. because the entry is in the global file).
std::string DescribeRecordedKeys(const HostSpec& host) {
  std::string path = host.known_hosts_file;
  if (path.empty()) {
    const char* home = std::getenv("HOME");
    path = std::string(home ? home : "") + "/.ssh/known_hosts";
  }
  // Through the one reader: libssh has read this file already, but it may have been swapped since.
  auto text = ReadUserFile(path, {"known_hosts file", kMaxKnownHostsBytes});
  if (!text.ok()) return "a different key";
  const std::string name = KnownHostsName(host);
  std::string recorded;
  for (std::string_view view : SplitLines(*text)) {
    ssh_knownhosts_entry* raw = nullptr;
    if (view.empty() || view[0] == '#') continue;
    const std::string line(view);
    if (ssh_known_hosts_parse_line(name.c_str(), line.c_str(), &raw) != SSH_OK) continue;
    std::unique_ptr<ssh_knownhosts_entry, KnownHostsEntryDeleter> entry(raw);
    if (!entry || !entry->publickey) continue;
    recorded += (recorded.empty() ? "" : " and ") + DescribeKey(entry->publickey);
  }
  return recorded.empty() ? "a different key" : recorded;
}

Status Changed(const HostSpec& host, const std::string& offered) {
  return Status::Invalid(
      "host key for " + host.Describe() + " has CHANGED: " + KnownHostsFileName(host) +
      " records " + DescribeRecordedKeys(host) + ", but the server now offers " + offered +
      ". This can be a man-in-the-middle attack, so the connection is refused (also with "
      "--accept-new-host-keys). If the host was re-keyed on purpose, remove the old entry with "
      "`ssh-keygen -R '" +
      KnownHostsName(host) + "' -f " + KnownHostsFileName(host) +
      "` and verify the new fingerprint out of band.");
}

Status Unknown(const HostSpec& host, const std::string& offered) {
  return Status::Invalid("host key for " + host.Describe() + " is not known: the server offers " +
                         offered + " and " + KnownHostsFileName(host) +
                         " has no entry for it. Verify the fingerprint out of band, then add it "
                         "to the known_hosts file or rerun with --accept-new-host-keys.");
}

}  // namespace

std::string KeyFingerprint(ssh_key key) {
  unsigned char* hash = nullptr;
  size_t len = 0;
  if (!key || ssh_get_publickey_hash(key, SSH_PUBLICKEY_HASH_SHA256, &hash, &len) != SSH_OK) {
    return "SHA256:?";
  }
  char* fp = ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash, len);
  ssh_clean_pubkey_hash(&hash);
  if (!fp) return "SHA256:?";
  std::string out(fp);
  ssh_string_free_char(fp);
  return out;
}

std::string KnownHostsName(const HostSpec& host) {
  if (host.port == 22) return host.address;
  return "[" + host.address + "]:" + std::to_string(host.port);
}

Status VerifyHostKey(ssh_session session, const HostSpec& host, bool accept_new) {
  ssh_key raw_key = nullptr;
  if (ssh_get_server_publickey(session, &raw_key) != SSH_OK) {
    return Status::IoError(host.Describe() +
                           ": cannot read the server's host key: " + LibsshError(session));
  }
  KeyHandle key(raw_key);
  const std::string offered = DescribeKey(key.get());

  switch (ssh_session_is_known_server(session)) {
    case SSH_KNOWN_HOSTS_OK:
      return Status::Ok();
    case SSH_KNOWN_HOSTS_CHANGED:
    case SSH_KNOWN_HOSTS_OTHER:
      return Changed(host, offered);
    case SSH_KNOWN_HOSTS_UNKNOWN:
    case SSH_KNOWN_HOSTS_NOT_FOUND:
      if (!accept_new) return Unknown(host, offered);
      if (ssh_session_update_known_hosts(session) != SSH_OK) {
        return Status::IoError(host.Describe() + ": cannot add the host key (" + offered + ") to " +
                               KnownHostsFileName(host) + ": " + LibsshError(session));
      }
      return Status::Ok();
    case SSH_KNOWN_HOSTS_ERROR:
      break;
  }
  return Status::IoError(host.Describe() + ": cannot check the host key against " +
                         KnownHostsFileName(host) + ": " + LibsshError(session));
}

}  // namespace rackchaos::ssh
