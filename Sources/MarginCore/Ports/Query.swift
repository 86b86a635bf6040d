import Foundation

/// A value a predicate compares a column with.
public enum StoreValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case date(Date)
    case uuid(UUID)
}

/// Types that can stand on the right of a predicate.
public protocol StoreValueConvertible: Sendable {
    var storeValue: StoreValue { get }
}

extension Int: StoreValueConvertible { public var storeValue: StoreValue { .integer(Int64(self)) } }
extension Int64: StoreValueConvertible { public var storeValue: StoreValue { .integer(self) } }
extension Double: StoreValueConvertible { public var storeValue: StoreValue { .real(self) } }
extension String: StoreValueConvertible { public var storeValue: StoreValue { .text(self) } }
extension Bool: StoreValueConvertible { public var storeValue: StoreValue { .integer(self ? 1 : 0) } }
extension Date: StoreValueConvertible { public var storeValue: StoreValue { .date(self) } }
extension UUID: StoreValueConvertible { public var storeValue: StoreValue { .uuid(self) } }
extension Optional: StoreValueConvertible where Wrapped: StoreValueConvertible {
    public var storeValue: StoreValue { self?.storeValue ?? .null }
}

/// A condition on a model's columns.
public indirect enum Predicate: Sendable {
    public enum Comparison: String, Sendable {
        case equal, notEqual, less, lessOrEqual, greater, greaterOrEqual

        /// The SQL operator (the same in SQLite and PostgreSQL).
        public var sqlOperator: String {
            switch self {
            case .equal: return "="
            case .notEqual: return "<>"
            case .less: return "<"
            case .lessOrEqual: return "<="
            case .greater: return ">"
            case .greaterOrEqual: return ">="
            }
        }
    }
    case compare(String, Comparison, StoreValue)
    /// Case-sensitive prefix match.
    case hasPrefix(String, String)
    case isIn(String, [StoreValue])
    case isNull(String)
    case and([Predicate])
    case or([Predicate])
    case not(Predicate)

    public static func && (lhs: Predicate, rhs: Predicate) -> Predicate { .and([lhs, rhs]) }
    public static func || (lhs: Predicate, rhs: Predicate) -> Predicate { .or([lhs, rhs]) }
    public static prefix func ! (value: Predicate) -> Predicate { .not(value) }
}

/// A typed reference to a column of model `M` holding values of type `V`.
public struct Field<M: Model, V: StoreValueConvertible>: Sendable {
    public let name: String
    public init(_ name: String) { self.name = name }

    public static func == (field: Self, value: V) -> Predicate { .compare(field.name, .equal, value.storeValue) }
    public static func != (field: Self, value: V) -> Predicate { .compare(field.name, .notEqual, value.storeValue) }
    public static func < (field: Self, value: V) -> Predicate { .compare(field.name, .less, value.storeValue) }
    public static func <= (field: Self, value: V) -> Predicate { .compare(field.name, .lessOrEqual, value.storeValue) }
    public static func > (field: Self, value: V) -> Predicate { .compare(field.name, .greater, value.storeValue) }
    public static func >= (field: Self, value: V) -> Predicate {
        .compare(field.name, .greaterOrEqual, value.storeValue)
    }
    public func hasPrefix(_ text: String) -> Predicate { .hasPrefix(name, text) }
    public func isIn(_ values: [V]) -> Predicate { .isIn(name, values.map(\.storeValue)) }
    public var isNull: Predicate { .isNull(name) }

    public var ascending: Sort { Sort(field: name, ascending: true) }
    public var descending: Sort { Sort(field: name, ascending: false) }
}

/// An ordering on one column. Text sorts case-insensitively; nulls sort last.
public struct Sort: Sendable {
    public var field: String
    public var ascending: Bool
}

/// A typed query: which rows of `M`, in what order, how many.
public struct Query<M: Model>: Sendable {
    public var predicate: Predicate?
    public var sorts: [Sort] = []
    public var limit: Int?
    public var offset: Int?

    public init() {}

    public func filter(_ predicate: Predicate) -> Self {
        var copy = self
        copy.predicate = self.predicate.map { .and([$0, predicate]) } ?? predicate
        return copy
    }

    public func sorted(by sorts: Sort...) -> Self {
        var copy = self
        copy.sorts += sorts
        return copy
    }

    public func limit(_ limit: Int?, offset: Int? = nil) -> Self {
        var copy = self
        copy.limit = limit
        copy.offset = offset
        return copy
    }
}
