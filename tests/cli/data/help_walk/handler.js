// help_walk_test.sh's --fetch-handler: answers the worker's fetch().
export default { fetch() { return new Response('handler answered'); } };
