// Great-circle geometry helpers of a geospatial toolkit (degrees in, kilometres out).
#pragma once

constexpr float kEarthRadiusKm = 6371.0f;
constexpr float kDegToRad = 0.017453292519943295f;

struct LatLon {
  float lat, lon;  // degrees
};

// Haversine distance between a and b in km.
__host__ __device__ inline float haversine_km(LatLon a, LatLon b) {
  const float dlat = (b.lat - a.lat) * kDegToRad, dlon = (b.lon - a.lon) * kDegToRad;
  const float s1 = sinf(0.5f * dlat), s2 = sinf(0.5f * dlon);
  const float h = s1 * s1 + cosf(a.lat * kDegToRad) * cosf(b.lat * kDegToRad) * s2 * s2;
  return 2.0f * kEarthRadiusKm * asinf(fminf(1.0f, sqrtf(h)));
}
