// A metrics registry that keeps every observation it is given: the retained
// allocation the source map tests expect at the top of the profile.

export interface Observation {
  route: string;
  status: number;
  durationMs: number;
  labels: string[];
}

export class MetricsRegistry {
  private readonly observations: Observation[] = [];

  recordRequest(route: string, status: number, durationMs: number): number {
    const labels: string[] = [];
    for (let i = 0; i < 16; i++) {
      labels.push(`${route}|${status}|${durationMs}|bucket-${i}`);
    }
    this.observations.push({ route, status, durationMs, labels });
    return this.observations.length;
  }

  size(): number {
    return this.observations.length;
  }
}
