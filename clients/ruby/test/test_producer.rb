# frozen_string_literal: true

# The producer and the sink against a real server: what they post, big integers and key order kept,
# idempotency, track, the retry rules (docs/sdk-and-cli.md, "What each SDK does on each failure"),
# and the seed's call sites through Horologium::Sink.
require 'minitest/autorun'
require_relative '../lib/horologium'
require_relative 'servers'

BIG = '{"n":123456789012345678901234567890,"z":1,"a":[1.0,-0,1e400]}'

class ProducerTest < Minitest::Test
  SERVER = RealServer.new
  Minitest.after_run { SERVER.stop }

  def producer
    @producer ||= Horologium::Producer.new(url: SERVER.url, retries: 2)
  end

  def entries(session)
    SERVER.get("/v1/sessions/#{session}/queue?after=0")['entries']
  end

  def test_a_raw_json_result_reaches_the_queue_byte_for_byte
    reply = producer.tool_result('rb-raw', call_id: 'c1', name: 'grep', result: Horologium.raw_json(BIG))
    assert_equal [1, false], [reply['queue_seq'], reply['duplicate']]
    assert_includes SERVER.get_text('/v1/sessions/rb-raw/queue?after=0'), %("result":#{BIG})
    assert_equal BIG, entries('rb-raw')[0]['message']['content']
  end

  def test_ruby_values_keep_big_integers_and_key_order
    value = { z: 1, big: 2**100, a: 'é😀', nested: { b: [1, 2], a: nil } }
    producer.tool_result('rb-values', call_id: 'c1', name: 'grep', result: value)
    entry = entries('rb-values')[0]
    assert_equal JSON.generate(value), entry['message']['content']
    assert_equal %w[z big a nested], entry['result'].keys
    assert_equal 2**100, entry['result']['big']
  end

  def test_repeats_are_duplicates_and_changes_are_conflicts
    first = producer.tool_result('rb-idem', call_id: 'c1', name: 'grep', result: { a: 1 })
    again = producer.tool_result('rb-idem', call_id: 'c1', name: 'grep', result: { a: 1 })
    assert_equal [true, first['queue_seq']], [again['duplicate'], again['queue_seq']]
    error = assert_raises(Horologium::CallIdConflictError) { producer.tool_result('rb-idem', call_id: 'c1', name: 'grep', result: { a: 2 }) }
    assert_equal [409, 'CALL_ID_CONFLICT', 'c1'], [error.status, error.code, error.call_id]
    assert_equal 1, entries('rb-idem').length
  end

  def test_events_are_idempotent_by_event_id
    first = producer.event('rb-ev', type: 'thinking', data: { text: 'hm' }, event_id: 'e-1')
    again = producer.event('rb-ev', type: 'thinking', data: { text: 'hm' }, event_id: 'e-1')
    assert_equal [true, first['event_seq']], [again['duplicate'], again['event_seq']]
    other = producer.event('rb-ev', type: 'thinking', data: { text: 'hm' })
    assert_equal [false, first['event_seq'] + 1], [other['duplicate'], other['event_seq']]
  end

  def test_a_refused_body_raises_with_the_server_code_and_is_not_retried
    retries = []
    quiet = Horologium::Producer.new(url: SERVER.url, on_retry: ->(r) { retries << r })
    error = assert_raises(Horologium::RequestError) { quiet.event('rb-bad', type: 'tool_completed', data: {}) }
    assert_equal [400, 'RESERVED_EVENT_TYPE'], [error.status, error.code]
    error = assert_raises(Horologium::RequestError) { quiet.tool_result('rb-bad', call_id: 'c1', name: 'grep', result: Horologium.raw_json('{not json')) }
    assert_equal 'INVALID_JSON', error.code
    assert_empty retries
  end

  def test_track_posts_the_call_then_the_value_or_the_error
    value = producer.track('rb-track', name: 'grep', args: { q: 'x' }) { { matches: 3 } }
    assert_equal({ matches: 3 }, value)
    assert_raises(ArgumentError) { producer.track('rb-track', name: 'grep') { raise ArgumentError, 'no such file' } }
    got = entries('rb-track')
    assert_equal [[{ 'matches' => 3 }, false], [{ 'error' => 'no such file' }, true]], got.map { |e| [e['result'], e['is_error']] }
    assert(got.all? { |e| e['execution_time'].is_a?(Float) })
  end
end

# The seed's Artificer call sites, kept as they are, through the sink.
class SinkTest < Minitest::Test
  SERVER = ProducerTest::SERVER

  # The seed's ui_preview (Ruby/oracle/artificer.rb), with String#truncate written out (ActiveSupport's).
  def self.ui_preview(result, limit = 4000, name: nil)
    return result if name&.to_s == 'read_file' && result.is_a?(Hash)

    text = result.is_a?(Hash) ? (result[:content] || result['content'] || result.to_json).to_s : result.to_s
    text.length > limit ? "#{text[0, limit - 3]}..." : text
  end

  # execute_standard: the tool ran; execute_fallback: it failed and its fallback result is echoed.
  def execute_standard(sink, name, args, result)
    sink&.send_status 'tool_starting', { name:, args: }
    exec_time = 0.012
    safe_result = result
    sink&.send_status 'tool_completed', { name:, execution_time: exec_time, result: SinkTest.ui_preview(safe_result, name: name) }
  end

  def execute_fallback(sink, name, args, error)
    sink&.send_status 'tool_starting', { name:, args: }
    exec_time = 0.5
    safe_result = { error: error, content: "fallback: #{error}" }
    sink&.send_status 'tool_completed', { name:, execution_time: exec_time, result: SinkTest.ui_preview(safe_result, name: name) }
  end

  def test_the_artificer_call_sites_become_tool_cards
    sink = Horologium::Sink.new(url: SERVER.url, session: 'oracle')
    read = { path: 'lib/a.rb', range: [1, 2], content: "a\nb" }
    execute_standard(sink, 'read_file', { path: 'lib/a.rb' }, read)
    execute_standard(sink, :grep, { pattern: 'TODO' }, { content: 'lib/a.rb:1: TODO', matches: 1 })
    execute_fallback(sink, 'run_tests', { filter: 'ledger' }, 'timeout after 30 s')
    sink.send_status 'thinking', { text: 'reading the ledger' }

    frames = SERVER.get('/v1/sessions/oracle/events?after=0')['events'].map { |f| f['result'] }
    assert_equal %w[tool_starting tool_completed tool_starting tool_completed tool_starting tool_completed thinking], frames.map { |f| f['type'] }
    cards = frames.select { |f| f['type'] == 'tool_completed' }.map { |f| f['data'] }
    starts = frames.select { |f| f['type'] == 'tool_starting' }.map { |f| f['data'] }
    assert_equal starts.map { |s| s['call_id'] }, cards.map { |c| c['call_id'] }, 'each completion is paired with its start'
    assert_equal %w[read_file grep run_tests], cards.map { |c| c['name'] }
    assert_equal({ 'path' => 'lib/a.rb', 'range' => [1, 2], 'content' => "a\nb" }, cards[0]['result'], 'read_file passes through')
    assert_equal 'lib/a.rb:1: TODO', cards[1]['result']
    assert_equal 'fallback: timeout after 30 s', cards[2]['result']
    assert_equal [0.012, 0.012, 0.5], cards.map { |c| c['execution_time'] }
    assert_equal({ 'pattern' => 'TODO' }, cards[1]['arguments'])
    assert_equal({ 'text' => 'reading the ledger' }, frames.last['data'])
  end

  def test_a_completion_naming_its_call_id_closes_that_start
    sink = Horologium::Sink.new(url: SERVER.url, session: 'oracle-named')
    sink.send_status('tool_starting', { name: 'grep', call_id: 'named' })
    sink.send_status('tool_starting', { name: 'grep' })
    sink.send_status('tool_completed', { name: 'grep', call_id: 'named', result: 'first' })
    sink.send_status('tool_completed', { name: 'grep', result: 'second' })
    entries = SERVER.get('/v1/sessions/oracle-named/queue?after=0')['entries']
    starts = SERVER.get('/v1/sessions/oracle-named/events?after=0')['events'].map { |f| f['result'] }.select { |f| f['type'] == 'tool_starting' }
    assert_equal [['named', 'first'], [starts[1]['data']['call_id'], 'second']], entries.map { |e| [e['call_id'], e['result']] }
  end

  def test_a_completion_without_a_start_gets_a_call_id_of_its_own
    sink = Horologium::Sink.new(url: SERVER.url, session: 'oracle-alone')
    sink.send_status('tool_completed', { 'name' => 'grep', 'result' => 'found' })
    entry = SERVER.get('/v1/sessions/oracle-alone/queue?after=0')['entries'][0]
    assert_equal ['grep', 'found', 36], [entry['name'], entry['result'], entry['call_id'].length]
  end
end

class FailureTest < Minitest::Test
  ACCEPTED = [202, {}, { event_seq: 1 }].freeze

  def envelope(code, message = 'no')
    { error: { code: code, message: message } }
  end

  def stub(replies, hang: 2.0)
    server = StubServer.new(replies, hang: hang)
    @stubs = (@stubs || []) << server
    server
  end

  def teardown
    (@stubs || []).each(&:stop)
  end

  def test_503_and_429_are_retried_after_their_retry_after_with_the_same_body
    server = stub([[503, { 'retry-after' => '0' }, envelope('SHUTTING_DOWN')], [429, { 'retry-after' => '1' }, envelope('RATE_LIMITED')], ACCEPTED])
    retries = []
    reply = Horologium::Producer.new(url: server.url, on_retry: ->(r) { retries << r }).event('s', type: 'note', data: { a: 1 })
    assert_equal({ 'event_seq' => 1, 'duplicate' => false }, reply)
    assert_equal [0.0, 1.0], retries.map { |r| r[:delay] }
    assert_equal [3, 1], [server.received.length, server.received.map { |r| r[2] }.uniq.length]
  end

  def test_a_proxy_502_and_504_are_retried
    server = stub([[502, {}, 'bad gateway'], [504, {}, 'gateway timeout'], ACCEPTED])
    assert_equal 1, Horologium::Producer.new(url: server.url, backoff: [0.01, 0.01]).event('s', type: 'note', data: {})['event_seq']
  end

  def test_other_errors_raise_at_once_with_the_envelope_code
    [[400, 'INVALID_BODY'], [401, 'UNAUTHORIZED'], [403, 'FORBIDDEN'], [413, 'BODY_TOO_LARGE'], [500, 'INTERNAL']].each do |status, code|
      server = stub([[status, {}, envelope(code, 'why')], ACCEPTED])
      error = assert_raises(Horologium::RequestError) { Horologium::Producer.new(url: server.url).event('s', type: 'note', data: {}) }
      assert_equal [status, code, 'why', 1], [error.status, error.code, error.message, server.received.length]
    end
  end

  def test_an_error_without_the_envelope_is_named_by_its_status
    server = stub([[418, {}, 'teapot']])
    error = assert_raises(Horologium::RequestError) { Horologium::Producer.new(url: server.url).event('s', type: 'note', data: {}) }
    assert_equal [418, 'HTTP_418'], [error.status, error.code]
  end

  def test_an_unreachable_server_is_retried_then_raised_as_a_network_error
    retries = []
    producer = Horologium::Producer.new(url: "http://127.0.0.1:#{free_port}", retries: 2, backoff: [0.01, 0.01], on_retry: ->(r) { retries << r })
    error = assert_raises(Horologium::RequestError) { producer.event('s', type: 'note', data: {}) }
    assert_equal [0, 'NETWORK_ERROR', 2], [error.status, error.code, retries.length]
  end

  def test_no_reply_within_the_timeout_is_retried_then_raised
    server = stub(%i[hang hang], hang: 1.0)
    producer = Horologium::Producer.new(url: server.url, timeout: 0.2, retries: 1, backoff: [0.01, 0.01])
    error = assert_raises(Horologium::RequestError) { producer.event('s', type: 'note', data: {}) }
    assert_equal ['TIMEOUT', 2], [error.code, server.received.length]
  end

  def test_a_connection_error_tries_the_next_url
    server = stub([ACCEPTED])
    producer = Horologium::Producer.new(url: ["http://127.0.0.1:#{free_port}", server.url], backoff: [0.01, 0.01])
    assert_equal 1, producer.event('s', type: 'note', data: {})['event_seq']
  end

  def test_the_token_is_sent_as_a_bearer_and_may_be_a_proc_asked_each_time
    server = stub([ACCEPTED, [503, { 'retry-after' => '0' }, envelope('SHUTTING_DOWN')], ACCEPTED])
    tokens = %w[t-2 t-3].each
    Horologium::Producer.new(url: server.url, token: 't-1').event('s', type: 'note', data: {})
    Horologium::Producer.new(url: server.url, token: -> { tokens.next }).event('s', type: 'note', data: {})
    assert_equal ['Bearer t-1', 'Bearer t-2', 'Bearer t-3'], server.received.map(&:last)
  end
end

# The rows a real server produces on demand: 429 with Retry-After under a rate limit, 401, 403.
class RealServerFailureTest < Minitest::Test
  PUBLISHER = 'publisher-token-0123456789'
  READER = 'reader-token-0123456789ab'
  TOKENS = [{ token: PUBLISHER, scopes: %w[publish consume], sessions: ['*'] }, { token: READER, scopes: ['subscribe'], sessions: ['*'] }].freeze
  SERVER = RealServer.new(HOROLOGIUM_TOKENS: JSON.generate(TOKENS), HOROLOGIUM_RATE_LIMIT: '2')
  Minitest.after_run { SERVER.stop }

  def test_a_rate_limit_is_waited_out_and_nothing_is_stored_twice
    retries = []
    producer = Horologium::Producer.new(url: SERVER.url, token: PUBLISHER, on_retry: ->(r) { retries << r })
    seqs = (0...6).map { |k| producer.event('rl', type: 'step', data: { k: k })['event_seq'] }
    assert_equal [1, 2, 3, 4, 5, 6], seqs
    assert(retries.any? { |r| r[:reason].include?('per second') }, '429s were retried')
  end

  def test_a_refused_token_and_a_missing_scope_raise_at_once
    [['not-a-token-at-all-0000', 401, 'UNAUTHORIZED'], [READER, 403, 'FORBIDDEN']].each do |token, status, code|
      retries = []
      producer = Horologium::Producer.new(url: SERVER.url, token: token, on_retry: ->(r) { retries << r })
      error = assert_raises(Horologium::RequestError) { producer.tool_result('auth', call_id: 'c1', name: 'grep', result: {}) }
      assert_equal [status, code, []], [error.status, error.code, retries]
    end
  end
end
