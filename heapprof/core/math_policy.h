// The Boost.Math policy of the core's statistics: a domain or evaluation
// error is reported through errno, never thrown (the core's API does not throw).
#pragma once

#include <boost/math/policies/policy.hpp>

namespace heapprof::internal {

using NoThrow =
    boost::math::policies::policy<boost::math::policies::domain_error<boost::math::policies::errno_on_error>,
                                  boost::math::policies::pole_error<boost::math::policies::errno_on_error>,
                                  boost::math::policies::overflow_error<boost::math::policies::errno_on_error>,
                                  boost::math::policies::evaluation_error<boost::math::policies::errno_on_error>>;

}  // namespace heapprof::internal
