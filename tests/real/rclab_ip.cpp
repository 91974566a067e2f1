// rclab-ip: the test rig's stand-in for root's `ip` on a lab "host" (tests/real/lab.h).
//
// The loopback sshd logs in as an unprivileged user, but link faults need CAP_NET_ADMIN. The lab copies
// this program into a directory only that user can enter and makes it setuid root. It accepts exactly
//   rclab-ip <netns> link set dev <iface> up|down
//   rclab-ip <netns> -o link show dev <iface>
// for a namespace named rclab<digits> and an interface named rc<letters/digits>, and execs
// /usr/sbin/ip -n <netns> ... as root. Anything else (such as an interface name with a ';' in it) is
// refused with exit status 64 before any privilege is used.
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

bool Matches(const char* s, const char* prefix, size_t max_len) {
  const size_t n = std::strlen(prefix);
  if (std::strncmp(s, prefix, n) != 0 || std::strlen(s) <= n || std::strlen(s) > max_len) return false;
  for (const char* p = s + n; *p; ++p)
    if (!std::isalnum(static_cast<unsigned char>(*p))) return false;
  return true;
}

int Refuse(const char* why) {
  std::fprintf(stderr, "rclab-ip: refused: %s\n", why);
  return 64;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> a(argv, argv + argc);
  const bool set = a.size() == 7 && a[2] == "link" && a[3] == "set" && a[4] == "dev" && (a[6] == "up" || a[6] == "down");
  const bool show = a.size() == 7 && a[2] == "-o" && a[3] == "link" && a[4] == "show" && a[5] == "dev";
  if (!set && !show) return Refuse("usage: rclab-ip <netns> link set dev <iface> up|down | <netns> -o link show dev <iface>");
  if (!Matches(argv[1], "rclab", 20)) return Refuse("the namespace must be rclab<digits>");
  const char* iface = set ? argv[5] : argv[6];
  if (!Matches(iface, "rc", 15)) return Refuse("the interface must be rc<letters and digits>");
  if (setresgid(0, 0, 0) != 0 || setresuid(0, 0, 0) != 0) return Refuse("not installed setuid root");
  std::vector<const char*> args = {"ip", "-n", argv[1]};
  for (size_t i = 2; i < a.size(); ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  const char* env[] = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", nullptr};
  execve("/usr/sbin/ip", const_cast<char* const*>(args.data()), const_cast<char* const*>(env));
  std::perror("rclab-ip: exec /usr/sbin/ip");
  return 65;
}
