import MarginCore
import MarginKit

extension GlobalOptions {
    /// What a command answers, written one way: under `--json` the view as one JSON document
    /// (`ViewJSON`: the encoder the server's API and the exports write with), otherwise `text`
    /// writes it for a person. A command says what it shows here, not in a branch of its own.
    /// The view is made only when it is written.
    func show<View: Encodable>(_ view: @autoclosure () async throws -> View, text: () async throws -> Void)
        async throws
    {
        guard json else { return try await text() }
        try Console.json(try await view())
    }

    /// A list of books (the fast writer of the encoder's bytes, see `PrettyJSON`).
    func show(_ books: [BookInfo], text: () async throws -> Void) async throws {
        guard json else { return try await text() }
        Console.json(books)
    }

    /// Search hits (the fast writer of the encoder's bytes, see `PrettyJSON`).
    func show(_ hits: [SearchHit], text: () async throws -> Void) async throws {
        guard json else { return try await text() }
        Console.json(hits)
    }
}

/// What a command that works item by item answers: a person sees each item's line as it is
/// done; under `--json`, one document of them all at the end (`finish`).
struct ItemReport<Item: Encodable> {
    let global: GlobalOptions
    private(set) var items = [Item]()

    init(_ global: GlobalOptions) { self.global = global }

    /// An item done: kept for the document, and its line written now for a person.
    mutating func add(_ item: Item, text: () -> Void) {
        items.append(item)
        if !global.json { text() }
    }

    func finish() async throws {
        try await global.show(items) {}
    }
}
