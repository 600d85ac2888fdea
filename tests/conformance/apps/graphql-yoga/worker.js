// A GraphQL Yoga server (graphql-yoga + graphql) as a Worker: queries over
// GET and POST, variables, fragments, a mutation, a resolver that throws a
// GraphQLError with extensions and one that throws a plain Error (masked by
// Yoga), a syntax error, a validation error, a context from a header, and
// GraphQL over HTTP's content negotiation.
import { createSchema, createYoga } from 'graphql-yoga';
import { GraphQLError } from 'graphql';

const books = [
  { id: '1', title: 'The Heap', authorId: 'a', year: 2001 },
  { id: '2', title: 'Garbage Collection', authorId: 'b', year: 1996 },
  { id: '3', title: 'Sampling', authorId: 'a', year: 2019 },
];
const authors = { a: { id: 'a', name: 'Ada' }, b: { id: 'b', name: 'Bea' } };

// Retained on purpose: the planted culprit of tests/cli (heapprof names it
// as the top of in-use).
const reviews = [];
function keepReview(bookId, text) {
  const review = { bookId, text, words: [] };
  for (let i = 0; i < 256; i++) review.words.push({ pos: i, token: 'word-' + i, gloss: 'token ' + i + ' of ' + text });
  reviews.push(review);
  return reviews.length;
}

const schema = createSchema({
  typeDefs: /* GraphQL */ `
    type Author { id: ID!, name: String!, books: [Book!]! }
    type Book { id: ID!, title: String!, year: Int!, author: Author! }
    type Query {
      books(after: Int): [Book!]!
      book(id: ID!): Book
      viewer: String
      fails: String
      crashes: String
    }
    type Mutation { review(bookId: ID!, text: String!): Int! }
  `,
  resolvers: {
    Query: {
      books: (_, { after }) => books.filter(b => after === undefined || after === null || b.year > after),
      book: (_, { id }) => books.find(b => b.id === id) ?? null,
      viewer: (_, __, ctx) => ctx.request.headers.get('x-viewer'),
      fails: () => { throw new GraphQLError('not allowed here', { extensions: { code: 'FORBIDDEN', http: { status: 200 } } }); },
      crashes: () => { throw new Error('internal detail that must not leak'); },
    },
    Mutation: { review: (_, { bookId, text }) => keepReview(bookId, text) },
    Book: { author: b => authors[b.authorId] },
    Author: { books: a => books.filter(b => b.authorId === a.id) },
  },
});

const yoga = createYoga({ schema, graphqlEndpoint: '/graphql', landingPage: false, graphiql: false, logging: false });

export default { fetch: (request, env, ctx) => yoga.fetch(request, env, ctx) };
