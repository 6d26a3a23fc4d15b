/**
 * `horologium/producer`: what an agent backend needs — the Producer (tool calls, results, events,
 * `track`) and the QueueConsumer (the model route's reader). Only `fetch` is used: no server code
 * and no Node-only module is loaded by importing it.
 */
export { Producer, type ProducerOptions, type ToolCallInput, type ToolResultInput, type EventInput, type ToolCallReply, type ToolResultReply, type TrackOptions, type JsonInput } from './producer.js';
export { QueueConsumer, type ConsumerOptions, type QueueBatch, type QueueEntry } from './consumer.js';
export { HorologiumRequestError, CallIdConflictError, type HttpOptions } from '../sdk-common/http-client.js';
export { rawJson, RawJson } from './raw-json.js';
