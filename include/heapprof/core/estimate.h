// Sampling error of a heap profile's values: V8's sampler sees an allocation
// of s bytes with probability 1 - exp(-s/I) and scales each sample by the
// inverse, so every value is an estimate from a countable number of samples.
// These functions turn the counts and sizes a profile holds into 95 %
// confidence intervals for a value, a share and a change (docs/statistics.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "heapprof/core/profile.h"

namespace heapprof {

// The sampling facts of a sum of profile rows (a function's flat or cum value,
// a sample type's total), accumulated row by row.
struct SampledValue {
  double value = 0;       // the estimate (sum of the rows' values)
  double samples = 0;     // raw samples V8 took for it
  double variance = 0;    // estimated variance of `value` (Horvitz-Thompson)
  double max_weight = 0;  // largest standard deviation one sample adds

  void Add(const SampledValue& other);
};

// A confidence interval; low <= estimate <= high.
struct Interval {
  double low = 0;
  double high = 0;
  // The larger distance from the estimate to either end: what "± x" prints.
  double HalfWidth(double estimate) const;
};

// The sampling model of one sample type of one profile: recovers each row's
// raw sample count from its value, its object size and the profile's
// period. The object size is the row's numeric label "bytes" (heapprof's own
// profiles) or, for a profile without it (@datadog/pprof's heap profiles:
// one row per V8 allocation entry), the row's space divided by its objects,
// from the pair of sample types "X_objects"/"X_space" or "objects"/"space".
class SamplingModel {
 public:
  // Empty when the profile cannot say how it was sampled: no period, a unit
  // other than bytes or count, or a nonzero row without an object size.
  static std::optional<SamplingModel> For(const Profile& profile, int sample_index);
  // Why For is empty, in a few words ("the profile has no sampling period");
  // "" when it is not.
  static std::string Unavailable(const Profile& profile, int sample_index);

  // What one row contributes (all zero for a row whose value is zero).
  SampledValue Row(const Sample& sample) const;
  // The whole sample type: every row added up.
  const SampledValue& total() const { return total_; }
  // The weight one more sample would have: the sample type's mean weight
  // (value per sample). Used for the interval of a value with no samples.
  double unseen_weight() const { return unseen_weight_; }

 private:
  SamplingModel(const Profile& profile, int sample_index);

  // The object size of a row: its "bytes" label, else space / objects of the
  // sample type pair; 0 when it has neither.
  double ObjectSize(const Sample& sample) const;
  // The objects and space sample types of `sample_index`'s pair, or -1.
  static std::pair<int, int> SizePair(const Profile& profile, int sample_index);
  static std::string Check(const Profile& profile, int sample_index);

  const Profile* profile_ = nullptr;
  int index_ = 0;
  int objects_index_ = -1;  // the pair giving object sizes when rows carry no "bytes" label
  int space_index_ = -1;
  bool space_ = false;
  double period_ = 0;
  SampledValue total_;
  double unseen_weight_ = 0;
};

inline constexpr double kConfidence = 0.95;

// The standard normal quantile z with P(|Z| < z) = confidence (1.96 for 0.95).
double NormalQuantile(double confidence);

// Interval for the true value behind `v`: the gamma interval of Fay and Feuer
// (1997) for a weighted sum of Poisson counts, exact (Garwood) for equal
// weights, sane at 0-5 samples. `unseen_weight` bounds a value with no samples.
Interval ValueInterval(const SampledValue& v, double unseen_weight, double confidence = kConfidence);

// Interval for the share part/total (0..1) where part's samples are a subset
// of total's: a Wilson score interval on the effective number of samples the
// ratio's (delta-method) variance implies.
Interval ShareInterval(const SampledValue& part, const SampledValue& total, double confidence = kConfidence);

// Two-sided p-value of "the true values behind base and next are equal", by
// the conditional (binomial) test of two Poisson counts on effective samples.
// The unseen weights stand in for a side with no samples; a side with no
// variance (objects far above the interval) is tested by the normal approximation.
double ChangePValue(const SampledValue& base, double base_unseen_weight, const SampledValue& next,
                    double next_unseen_weight);

// One-sided p-value of "the true value behind `more` is no larger than the
// one behind `less`" (the same conditional test on effective samples as
// ChangePValue), and the smallest p-value samples of these weights could give
// (for Tarone's correction over many tests).
struct OneSidedPValue {
  double p = 1;
  double min_p = 1;
};
OneSidedPValue ExcessPValue(const SampledValue& more, double more_unseen_weight, const SampledValue& less,
                            double less_unseen_weight);

// The sampling interval that gives a value of `target_bytes` about
// `samples` samples, rounded down to a power of two and clamped to
// [min_interval, max_interval].
int64_t IntervalForSamples(double target_bytes, double samples, int64_t min_interval, int64_t max_interval);

// What `--interval auto` picks for a sandboxed run: the interval at which a
// function holding `share` of the heap limit gets about `samples` samples
// (100 samples: its value within about ±20 % at 95 %), between 4 KiB and
// 512 KiB. 128 MiB gives 64 KiB.
int64_t AutoInterval(uint64_t heap_limit_bytes, double share = 0.05, double samples = 100);

}  // namespace heapprof
