/**
 * `horologium-sdk`'s root entry: the producer, the queue consumer and the stream client with their
 * types, so `import { Producer, QueueConsumer, HorologiumClient } from 'horologium-sdk'` works. Only
 * re-exports, and the package says it has no side effects, so a bundler keeps just what is used;
 * the subpaths (`horologium-sdk/producer`, `horologium-sdk/client`) stay.
 */
export * from '../producer/index.js';
export * from '../client/index.js';
