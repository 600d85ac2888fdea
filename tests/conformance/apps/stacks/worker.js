// Error bodies that carry stacks, as tRPC's and other frameworks' error
// formatters do: each route throws in a function of its own (a validation
// error, a class method, a nested call, a rethrown cause) and answers 500
// with err.stack, err.cause.stack and the structured call sites of
// Error.prepareStackTrace. Both runtimes must name the module as workerd does
// (worker.js, relative to the main module), never by an absolute path of the
// machine the worker ran on.
class ValidationError extends Error {
  constructor(field) {
    super(`invalid ${field}`);
    this.name = 'ValidationError';
  }
}

function validate(input) {
  if (typeof input.name !== 'string') throw new ValidationError('name');
  return input;
}

class Repository {
  find(id) {
    throw new Error(`no item ${id}`);
  }
}

function level3() { throw new TypeError('deep failure'); }
function level2() { return level3(); }
function level1() { return level2(); }

function withCause() {
  try {
    level1();
  } catch (err) {
    throw new Error('wrapped', { cause: err });
  }
}

// The call sites' file names, as an error formatter that reads them would.
function callSiteFiles() {
  const original = Error.prepareStackTrace;
  Error.prepareStackTrace = (_, sites) => sites.map(s => `${s.getFunctionName()} ${s.getFileName()}`);
  try {
    return new Error('sites').stack;
  } finally {
    Error.prepareStackTrace = original;
  }
}

// Only the frames of the worker: what runs under them (the runtime that
// called the handler) is no part of the app.
const own = stack => stack.split('\n').filter(line => !/^\s+at /.test(line) || /worker\.js/.test(line)).join('\n');

const routes = {
  '/validate': () => validate({}),
  '/repository': () => new Repository().find(7),
  '/nested': () => level1(),
  '/cause': () => withCause(),
};

export default {
  async fetch(request) {
    const url = new URL(request.url);
    if (url.pathname === '/sites') return Response.json(callSiteFiles().filter(s => s.startsWith('callSiteFiles')));
    const route = routes[url.pathname];
    if (!route) return new Response('not found', { status: 404 });
    try {
      route();
      return new Response('no error');
    } catch (err) {
      return Response.json(
        { name: err.name, message: err.message, stack: own(err.stack), cause: err.cause ? own(err.cause.stack) : null },
        { status: 500 },
      );
    }
  },
};
