import Foundation

/// An optional that is always written, as `null` when absent (synthesized `Codable` leaves an
/// absent optional out). The JSON contract lists every field, so a field is there even when
/// empty; reading accepts a missing key as nil.
@propertyWrapper
public struct Null<Value: Codable & Sendable & Equatable>: Codable, Sendable, Equatable {
    public var wrappedValue: Value?

    public init(wrappedValue: Value?) {
        self.wrappedValue = wrappedValue
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        wrappedValue = container.decodeNil() ? nil : try container.decode(Value.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let wrappedValue { try container.encode(wrappedValue) } else { try container.encodeNil() }
    }
}

extension KeyedDecodingContainer {
    /// A `@Null` field whose key is missing decodes as nil.
    public func decode<Value>(_ type: Null<Value>.Type, forKey key: Key) throws -> Null<Value> {
        try decodeIfPresent(type, forKey: key) ?? Null(wrappedValue: nil)
    }
}
