// Status and Result<T>: errors at module boundaries are values, never exceptions.
//
// A Status carries a code and a message that already names its context (which file, component or
// operation). Library failure styles (yaml-cpp exceptions, SQLite codes, libssh errors) are converted
// into a Status where the library is called.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace rackchaos {

enum class StatusCode {
  kOk,
  kInvalidArgument,  // bad input from the user: plan, inventory, command line
  kNotFound,         // a named thing does not exist
  kNotSupported,     // a backend cannot do this verb
  kUnavailable,      // a host, database or service cannot be reached right now
  kTimeout,
  kIoError,
  kCorrupt,          // stored data is damaged
  kAborted,          // stopped on purpose (signal, stop file, safety abort)
  kInternal,         // a bug in rackchaos
};

const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  static Status Invalid(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
  static Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
  static Status NotSupported(std::string m) { return {StatusCode::kNotSupported, std::move(m)}; }
  static Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
  static Status Timeout(std::string m) { return {StatusCode::kTimeout, std::move(m)}; }
  static Status IoError(std::string m) { return {StatusCode::kIoError, std::move(m)}; }
  static Status Corrupt(std::string m) { return {StatusCode::kCorrupt, std::move(m)}; }
  static Status Aborted(std::string m) { return {StatusCode::kAborted, std::move(m)}; }
  static Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "invalid argument: <message>", or "ok".
  std::string ToString() const;
  // Returns a copy whose message is "<context>: <message>".
  Status WithContext(const std::string& context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// Either a value or a non-OK Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit on purpose
  Result(Status status) : v_(std::move(status)) { assert(!std::get<Status>(v_).ok()); }  // NOLINT

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOkStatus;
    return ok() ? kOkStatus : std::get<Status>(v_);
  }
  T& value() & { assert(ok()); return std::get<T>(v_); }
  const T& value() const& { assert(ok()); return std::get<T>(v_); }
  T&& value() && { assert(ok()); return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace rackchaos

// Returns early from a function returning Status or Result<T> when `expr` is not OK.
#define RC_RETURN_IF_ERROR(expr)                      \
  do {                                                \
    ::rackchaos::Status rc_status_ = (expr);          \
    if (!rc_status_.ok()) return rc_status_;          \
  } while (0)

#define RC_CONCAT_INNER(a, b) a##b
#define RC_CONCAT(a, b) RC_CONCAT_INNER(a, b)
// `RC_ASSIGN_OR_RETURN(auto x, MakeX());` binds the value or returns the error.
#define RC_ASSIGN_OR_RETURN(decl, expr)                                   \
  auto RC_CONCAT(rc_result_, __LINE__) = (expr);                          \
  if (!RC_CONCAT(rc_result_, __LINE__).ok())                              \
    return RC_CONCAT(rc_result_, __LINE__).status();                      \
  decl = std::move(RC_CONCAT(rc_result_, __LINE__)).value()
