/// How one SQL database spells what a `Query` says: its placeholders, its truth values, how it
/// orders text, how it tests a prefix. Each SQL backend has one; `QueryRenderer` writes the
/// rest once for all.
///
/// Parity between the backends (a new backend's author starts here): text sorts
/// case-insensitively, NULLs last; rows that sort equal come in id order where the database
/// would not keep them so; an empty IN list matches nothing; `.compare(_, _, .null)` is
/// `IS NULL` / `IS NOT NULL`; a query without a limit but with an offset skips that many rows.
/// Field names come from model code, never from users.
public protocol SQLDialect {
    /// Binds `value` (compared with `column`) and returns its placeholder.
    mutating func bind(_ value: StoreValue, column: String?) -> String
    /// The literals for an always-true and an always-false condition.
    var truth: (true: String, false: String) { get }
    /// A column as an ORDER BY key (text compared case-insensitively).
    func orderKey(_ column: String) -> String
    /// Whether to end every ORDER BY with `id` (a database that doesn't keep rows that sort
    /// equal in their table order).
    var ordersByIdLast: Bool { get }
    /// The condition that `column`'s text starts with `text` (bound as the dialect needs).
    mutating func hasPrefix(_ column: String, text: String) -> String
    /// The LIMIT and OFFSET clauses.
    func limit(_ limit: Int?, offset: Int?) -> String
    /// The condition that `column` (quoted; `name` unquoted) is one of `values`, if the dialect
    /// has a spelling of its own for it; else nil, for `IN (…)` with a placeholder each.
    mutating func isIn(_ column: String, name: String, values: [StoreValue]) -> String?
}

extension SQLDialect {
    public mutating func isIn(_ column: String, name: String, values: [StoreValue]) -> String? { nil }
}

/// A `Query`'s WHERE, ORDER BY and LIMIT clauses in a dialect, its values bound in order.
public struct QueryRenderer<Dialect: SQLDialect> {
    public var dialect: Dialect

    public init(_ dialect: Dialect) {
        self.dialect = dialect
    }

    public mutating func clauses<M: Model>(_ query: Query<M>, withOrder: Bool = true) -> String {
        var sql = ""
        if let predicate = query.predicate { sql += " WHERE " + condition(predicate) }
        if withOrder {
            var order = query.sorts.map { "\(dialect.orderKey($0.field)) \($0.ascending ? "ASC" : "DESC") NULLS LAST" }
            if dialect.ordersByIdLast { order.append("id") }
            if !order.isEmpty { sql += " ORDER BY " + order.joined(separator: ", ") }
        }
        return sql + dialect.limit(query.limit, offset: query.offset)
    }

    /// A DELETE of the rows `query` selects (through their ids when it is ordered or limited:
    /// DELETE takes neither everywhere).
    public mutating func delete<M: Model>(_ query: Query<M>) -> String {
        let table = quotedIdentifier(M.entity)
        guard query.limit != nil || query.offset != nil || !query.sorts.isEmpty else {
            return "DELETE FROM \(table)" + clauses(query, withOrder: false)
        }
        return "DELETE FROM \(table) WHERE id IN (SELECT id FROM \(table)" + clauses(query) + ")"
    }

    public mutating func condition(_ predicate: Predicate) -> String {
        switch predicate {
        case .compare(let name, let comparison, let operand):
            let column = quotedIdentifier(name)
            if case .null = operand {
                switch comparison {
                case .equal: return "\(column) IS NULL"
                case .notEqual: return "\(column) IS NOT NULL"
                default: return dialect.truth.false
                }
            }
            return "\(column) \(comparison.sqlOperator) \(dialect.bind(operand, column: name))"
        case .hasPrefix(let name, let text):
            return dialect.hasPrefix(quotedIdentifier(name), text: text)
        case .isIn(let name, let values):
            guard !values.isEmpty else { return dialect.truth.false }
            if let own = dialect.isIn(quotedIdentifier(name), name: name, values: values) { return own }
            return "\(quotedIdentifier(name)) IN ("
                + values.map { dialect.bind($0, column: name) }.joined(separator: ", ") + ")"
        case .isNull(let name):
            return "\(quotedIdentifier(name)) IS NULL"
        case .and(let parts):
            return parts.isEmpty
                ? dialect.truth.true : "(" + parts.map { condition($0) }.joined(separator: " AND ") + ")"
        case .or(let parts):
            return parts.isEmpty
                ? dialect.truth.false : "(" + parts.map { condition($0) }.joined(separator: " OR ") + ")"
        case .not(let inner):
            return "NOT (" + condition(inner) + ")"
        }
    }
}

/// A column or table name as an SQL identifier, its quotes doubled.
public func quotedIdentifier(_ name: String) -> String {
    "\"" + name.replacingAll("\"", with: "\"\"") + "\""
}

/// What full-text ranking shares between the backends.
public enum SearchRanking {
    /// Reads the pages with `ids`, in that order, through `load` (the pages of one batch, in any
    /// order; ids it no longer finds are left out), a batch at a time, batches growing from
    /// `first` to 256 (a search that stops at its limit reads little more than it shows), until
    /// `visit` says stop; returns false then.
    public static func visitPages(
        _ ids: [Int64], first: Int = 16, load: ([Int64]) throws -> [PageText], visit: (PageText) throws -> Bool
    ) throws -> Bool {
        var start = 0
        var size = first
        while start < ids.count {
            let batch = Array(ids[start..<min(ids.count, start + size)])
            start += batch.count
            size = min(size * 2, 256)
            let pages = Dictionary(try load(batch).compactMap { page in page.id.map { ($0, page) } }) { a, _ in a }
            for id in batch {
                guard let page = pages[id] else { continue }
                if try !visit(page) { return false }
            }
        }
        return true
    }

    /// Up to this many matching pages are ranked by relevance; past it, in library order, read
    /// as needed (ranking them all would cost more than a user waits).
    public static let rankedPages = 2_000
}
