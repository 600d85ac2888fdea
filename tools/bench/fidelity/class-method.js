// Fidelity case: a class method retains audit entries forever.
// Culprit: record (AuditLog.prototype.record, inuse_space).
class AuditLog {
  constructor() {
    this.entries = [];
  }
  record(request) {
    this.entries.push({ method: request.method, url: request.url, at: this.entries.length, tags: ['audit', 'v1'] });
  }
}

const log = new AuditLog();

export default {
  fetch(request) {
    log.record(request);
    return new Response('ok');
  },
};
