import ArgumentParser
import Foundation
import MarginKit

extension Margin {
    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show",
            abstract: "Show everything about one book.",
            discussion: "BOOK is an id, a SHA-256 prefix (4+ hex digits) or part of the title.")

        @Argument(help: "The book.")
        var book: String

        @OptionGroup var global: GlobalOptions

        func run() throws {
            let library = try global.openLibrary()
            let info = try library.info(library.touch(library.resolve(book)))
            if global.json { return try Console.json(info) }
            let book = info.book
            var lines: [(String, String)] = [
                ("id", String(book.id ?? 0)),
                ("title", book.title),
                ("author", book.author ?? "-"),
                ("pages", String(book.pages) + (book.textlessPages > 0 ? " (\(book.textlessPages) without a text layer: not searchable)" : "")),
                ("size", "\(formatBytes(book.bytes)) (\(book.bytes) bytes)"),
                ("sha256", book.sha256),
                ("folder", book.folder ?? "-"),
                ("tags", info.tags.isEmpty ? "-" : info.tags.joined(separator: ", ")),
                ("added", shortDate(book.addedAt)),
                ("opened", shortDate(book.openedAt)),
                ("file", info.file ?? "not cached (fetched again from a source when needed)"),
            ]
            if book.password != nil { lines.append(("encrypted", "yes (password saved)")) }
            for (index, source) in info.sources.enumerated() {
                lines.append((index == 0 ? "sources" : "", source))
            }
            if let memo = book.memo { lines.append(("memo", memo)) }
            for (key, value) in lines {
                Console.out(key.padding(toLength: 10, withPad: " ", startingAt: 0) + value)
            }
        }
    }

    struct Recent: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "recent",
            abstract: "List the books opened most recently (shown, read, rendered, annotated).")

        @Option(help: ArgumentHelp("At most N books.", valueName: "N"))
        var limit = 10

        @OptionGroup var global: GlobalOptions

        func validate() throws {
            guard limit >= 1 else { throw ValidationError("--limit must be at least 1") }
        }

        func run() throws {
            let books = try global.openLibrary().recent(limit: limit)
            if global.json { return try Console.json(books) }
            if books.isEmpty { return global.note("no book has been opened yet") }
            Console.table(
                ["ID", "TITLE", "AUTHOR", "PAGES", "OPENED"],
                books.map {
                    [String($0.book.id ?? 0), Console.cell($0.book.title), Console.cell($0.book.author, width: 24),
                     String($0.book.pages), shortDate($0.book.openedAt)]
                })
        }
    }

    struct PathCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "path",
            abstract: "Print the path of a book's cached PDF (fetched again if missing).",
            discussion: "Example: okular \"$(margin path 'attention is all')\"")

        @Argument(help: "The book.")
        var book: String

        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let library = try global.openLibrary()
            let selected = try library.resolve(book)
            let path = try await library.ensureCached(selected)
            if global.json {
                try Console.json(["path": path])
            } else {
                Console.out(path)
            }
        }
    }
}
