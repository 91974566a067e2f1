// The one way rackchaos includes Boost.Asio.
//
// Boost 1.74's boost/asio/awaitable.hpp uses std::exchange without including <utility>, which GCC
// 12 in C++20 mode does not pull in transitively. Including <utility> first fixes every Asio
// include.
#pragma once

// clang-format off
#include <utility>
#include <boost/asio.hpp>
// clang-format on
