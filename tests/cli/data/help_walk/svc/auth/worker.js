// The auth worker of help_walk_test.sh, given with --service auth=FOLDER.
export default { fetch() { return new Response('auth answered'); } };
