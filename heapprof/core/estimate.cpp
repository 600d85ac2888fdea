// Confidence intervals for the values of a sampled heap profile. The
// derivation, its assumptions and its measured coverage: docs/statistics.md.
#include "heapprof/core/estimate.h"

#include "heapprof/core/math_policy.h"
#include "heapprof/core/raw_snapshot.h"

#include <boost/math/special_functions/beta.hpp>
#include <boost/math/special_functions/erf.hpp>
#include <boost/math/special_functions/gamma.hpp>

#include <algorithm>
#include <cmath>
#include <string_view>
#include <tuple>

#include <fmt/format.h>

namespace heapprof {
namespace {

using internal::NoThrow;

double Tail(double confidence) { return (1.0 - confidence) / 2.0; }

// A sum of samples as a Poisson count of equal weights with the same mean and
// variance: `count` effective samples of `weight` each.
struct Effective {
  double count = 0;
  double weight = 0;
};

Effective EffectiveSamples(const SampledValue& v, double unseen_weight) {
  if (v.value <= 0 || v.samples <= 0) return {0, unseen_weight};
  return {v.value * v.value / v.variance, v.variance / v.value};
}

}  // namespace

void SampledValue::Add(const SampledValue& other) {
  value += other.value;
  samples += other.samples;
  variance += other.variance;
  max_weight = std::max(max_weight, other.max_weight);
}

double NormalQuantile(double confidence) { return std::sqrt(2.0) * boost::math::erf_inv(confidence, NoThrow()); }

double Interval::HalfWidth(double estimate) const { return std::max(high - estimate, estimate - low); }

std::pair<int, int> SamplingModel::SizePair(const Profile& profile, int sample_index) {
  std::string_view type = profile.str(profile.sample_types[sample_index].type);
  // "inuse_space" -> "inuse_", "objects" -> "".
  std::string prefix;
  if (type.ends_with("objects")) {
    prefix = type.substr(0, type.size() - 7);
  } else if (type.ends_with("space")) {
    prefix = type.substr(0, type.size() - 5);
  } else {
    return {-1, -1};
  }
  int objects = profile.FindSampleType(prefix + "objects");
  int space = profile.FindSampleType(prefix + "space");
  if (objects < 0 || space < 0 || profile.str(profile.sample_types[objects].unit) != "count" ||
      profile.str(profile.sample_types[space].unit) != "bytes") {
    return {-1, -1};
  }
  return {objects, space};
}

double SamplingModel::ObjectSize(const Sample& sample) const {
  if (int64_t bytes = profile_->NumLabel(sample, "bytes"); bytes > 0) return static_cast<double>(bytes);
  if (objects_index_ < 0 || static_cast<size_t>(std::max(objects_index_, space_index_)) >= sample.values.size()) {
    return 0;
  }
  int64_t objects = sample.values[objects_index_], space = sample.values[space_index_];
  if (objects <= 0 || space <= 0) return 0;
  return static_cast<double>(space) / static_cast<double>(objects);
}

std::string SamplingModel::Check(const Profile& profile, int sample_index) {
  if (sample_index < 0 || static_cast<size_t>(sample_index) >= profile.sample_types.size()) {
    return "no such sample type";
  }
  if (profile.period <= 0) return "the profile does not say how often it was sampled (no period)";
  std::string_view unit = profile.str(profile.sample_types[sample_index].unit);
  if (unit != "bytes" && unit != "count") {
    return fmt::format("its unit, {}, is not one of a heap sampler's (bytes, count)", unit.empty() ? "none" : unit);
  }
  return "";
}

std::string SamplingModel::Unavailable(const Profile& profile, int sample_index) {
  if (std::string why = Check(profile, sample_index); !why.empty()) return why;
  if (For(profile, sample_index)) return "";
  for (const Sample& sample : profile.samples) {
    if (static_cast<size_t>(sample_index) < sample.values.size() && sample.values[sample_index] < 0) {
      return "it has negative values (a difference of profiles?)";
    }
  }
  return "its rows carry no object size (no \"bytes\" label, no objects/space pair of sample types)";
}

std::optional<SamplingModel> SamplingModel::For(const Profile& profile, int sample_index) {
  if (!Check(profile, sample_index).empty()) return std::nullopt;
  SamplingModel model(profile, sample_index);
  std::tie(model.objects_index_, model.space_index_) = SizePair(profile, sample_index);
  for (const Sample& sample : profile.samples) {
    if (static_cast<size_t>(sample_index) >= sample.values.size()) return std::nullopt;
    int64_t value = sample.values[sample_index];
    if (value == 0) continue;
    if (value < 0 || model.ObjectSize(sample) <= 0) return std::nullopt;
    model.total_.Add(model.Row(sample));
  }
  model.unseen_weight_ = model.total_.samples > 0 ? model.total_.value / model.total_.samples
                         : model.space_           ? model.period_
                                                  : 1.0;
  return model;
}

SamplingModel::SamplingModel(const Profile& profile, int sample_index)
    : profile_(&profile),
      index_(sample_index),
      space_(profile.str(profile.sample_types[sample_index].unit) == "bytes"),
      period_(static_cast<double>(profile.period)) {}

SampledValue SamplingModel::Row(const Sample& sample) const {
  SampledValue row;
  if (static_cast<size_t>(index_) >= sample.values.size() || sample.values[index_] <= 0) return row;
  double size = ObjectSize(sample);
  if (size <= 0) return row;
  double p = -std::expm1(-size / period_);  // chance that V8 samples one such object
  double weight = space_ ? size / p : 1.0 / p;
  row.value = static_cast<double>(sample.values[index_]);
  row.samples = std::max(1.0, std::round(row.value / weight));
  // Horvitz-Thompson: each sample of an object seen with probability p adds
  // (1 - p) w^2 to the variance; objects far above the interval add nothing.
  row.variance = row.samples * (1.0 - p) * weight * weight;
  row.max_weight = weight * std::sqrt(1.0 - p);
  return row;
}

Interval ValueInterval(const SampledValue& v, double unseen_weight, double confidence) {
  const double tail = Tail(confidence);
  const double y = std::max(0.0, v.value), var = std::max(0.0, v.variance);
  Interval out{y, y};
  if (y > 0 && var > 0) out.low = var / y * boost::math::gamma_p_inv(y * y / var, tail, NoThrow());
  // The upper end adds one more sample of the largest weight (Fay-Feuer), so
  // a value with no samples still gets an upper bound.
  double w = v.samples > 0 ? v.max_weight : unseen_weight;
  double var1 = var + w * w, y1 = y + w;
  if (var1 > 0 && y1 > 0) out.high = var1 / y1 * boost::math::gamma_p_inv(y1 * y1 / var1, 1.0 - tail, NoThrow());
  out.low = std::min(out.low, y);
  out.high = std::max(out.high, y);
  return out;
}

Interval ShareInterval(const SampledValue& part, const SampledValue& total, double confidence) {
  const double t = total.value;
  if (t <= 0) return {0, 0};
  const double r = std::clamp(part.value / t, 0.0, 1.0);
  // Delta method for part / (part + rest), the two sums independent.
  const double var_part = std::max(0.0, part.variance);
  const double var_rest = std::max(0.0, total.variance - part.variance);
  const double var = (var_part * (1 - r) * (1 - r) + var_rest * r * r) / (t * t);
  double n = 0;  // effective samples: what a binomial share with this variance would rest on
  if (r > 0 && r < 1 && var > 0) {
    n = r * (1 - r) / var;
  } else if (total.variance > 0) {
    n = t * t / total.variance;
  } else {
    return {r, r};
  }
  const double z = NormalQuantile(confidence), z2n = z * z / n;
  const double center = (r + z2n / 2) / (1 + z2n);
  const double half = z / (1 + z2n) * std::sqrt(r * (1 - r) / n + z2n / (4 * n));
  return {std::clamp(std::min(center - half, r), 0.0, 1.0), std::clamp(std::max(center + half, r), 0.0, 1.0)};
}

double ChangePValue(const SampledValue& base, double base_unseen_weight, const SampledValue& next,
                    double next_unseen_weight) {
  // A side known exactly (objects far above the interval are sampled almost
  // surely, so no variance) is no Poisson count: test the difference against
  // the other side's noise alone, by the normal approximation.
  auto exact = [](const SampledValue& v) { return v.value > 0 && v.variance <= 0; };
  if (exact(base) || exact(next)) {
    double difference = std::abs(next.value - base.value);
    double sd = std::sqrt(std::max(0.0, base.variance) + std::max(0.0, next.variance));
    if (sd <= 0) return difference < 0.5 ? 1.0 : 0.0;
    return boost::math::erfc(difference / sd / std::sqrt(2.0), NoThrow());
  }
  Effective b = EffectiveSamples(base, base_unseen_weight);
  Effective x = EffectiveSamples(next, next_unseen_weight);
  const double n = b.count + x.count;
  if (n <= 0 || b.weight <= 0 || x.weight <= 0) return 1.0;
  // Equal true values: each effective sample lands in `next` with chance pi.
  const double pi = b.weight / (b.weight + x.weight);
  const double k = x.count;
  double at_most = k >= n ? 1.0 : boost::math::ibeta(n - k, k + 1, 1 - pi, NoThrow());
  double at_least = k <= 0 ? 1.0 : boost::math::ibeta(k, n - k + 1, pi, NoThrow());
  return std::min(1.0, 2 * std::min(at_most, at_least));
}

OneSidedPValue ExcessPValue(const SampledValue& more, double more_unseen_weight, const SampledValue& less,
                            double less_unseen_weight) {
  auto exact = [](const SampledValue& v) { return v.value > 0 && v.variance <= 0; };
  if (exact(more) || exact(less)) {
    // As in ChangePValue: a side known exactly is tested by the normal approximation.
    const double difference = more.value - less.value;
    const double sd = std::sqrt(std::max(0.0, more.variance) + std::max(0.0, less.variance));
    if (sd <= 0) return {difference > 0.5 ? 0.0 : 1.0, 0.0};
    return {0.5 * boost::math::erfc(difference / sd / std::sqrt(2.0), NoThrow()), 0.0};
  }
  const Effective m = EffectiveSamples(more, more_unseen_weight);
  const Effective l = EffectiveSamples(less, less_unseen_weight);
  const double n = m.count + l.count;
  if (n <= 0 || m.weight <= 0 || l.weight <= 0) return {1.0, 1.0};
  // Equal true values: each of the n effective samples is one of `more`'s with chance pi.
  const double pi = l.weight / (m.weight + l.weight);
  OneSidedPValue out;
  out.min_p = std::pow(pi, n);  // all n in `more`: the smallest p these samples allow
  out.p = m.count <= 0 ? 1.0 : std::clamp(boost::math::ibeta(m.count, n - m.count + 1, pi, NoThrow()), 0.0, 1.0);
  return out;
}

int64_t IntervalForSamples(double target_bytes, double samples, int64_t min_interval, int64_t max_interval) {
  double wanted = samples > 0 ? target_bytes / samples : static_cast<double>(max_interval);
  int64_t interval = min_interval;
  while (interval * 2 <= max_interval && static_cast<double>(interval * 2) <= wanted) interval *= 2;
  return interval;
}

int64_t AutoInterval(uint64_t heap_limit_bytes, double share, double samples) {
  return IntervalForSamples(share * static_cast<double>(heap_limit_bytes), samples, 4 * 1024, kDefaultIntervalBytes);
}

}  // namespace heapprof
