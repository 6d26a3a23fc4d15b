# frozen_string_literal: true

require 'json'

module Horologium
  # JSON text sent as it is: a result already serialised, or one whose exact text matters.
  class RawJson
    attr_reader :text

    def initialize(text)
      @text = text
    end
  end

  # Marks JSON text to be sent as is. The server validates it; malformed text is a 400 INVALID_JSON.
  def self.raw_json(text)
    raise ArgumentError, 'raw_json needs a non-empty JSON text' unless text.is_a?(String) && !text.strip.empty?

    RawJson.new(text)
  end

  # The JSON text of a value: a RawJson's own text, anything else through JSON.generate (Ruby's
  # Integers stay exact, Hash order is kept, NaN is refused).
  def self.json_text_of(value)
    value.is_a?(RawJson) ? value.text : JSON.generate(value)
  end

  # A JSON object's body from members already in JSON text; members whose text is nil are left out.
  def self.object_body(members)
    '{' + members.reject { |_, text| text.nil? }.map { |key, text| "#{JSON.generate(key)}:#{text}" }.join(',') + '}'
  end
end
