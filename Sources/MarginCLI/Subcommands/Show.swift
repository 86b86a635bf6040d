import ArgumentParser
import Foundation
import MarginCore
import MarginKit

extension Margin {
    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show",
            abstract: "Show everything about one book.",
            discussion: "BOOK is an id, a SHA-256 prefix (4+ hex digits) or part of the title."
        )

        @Argument(help: "The book.")
        var book: String

        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let library = try global.openLibrary()
            let info = try await library.info(library.touch(library.resolve(book)))
            try await global.show(info) {
                let book = info.book
                var lines: [(String, String)] = [
                    ("id", String(book.id ?? 0)),
                    ("title", book.title),
                    ("author", book.author ?? "-"),
                    (
                        "pages",
                        String(book.pages)
                            + (book.ocrPages > 0
                                ? " (\(book.ocrPages) read by OCR"
                                    + (book.ocrConfidence.map { String(format: ", confidence %.0f", $0) } ?? "") + ")"
                                : "")
                            + (book.textlessPages > 0
                                ? " (\(book.textlessPages) with nothing legible: not searchable)" : "")
                    ),
                    ("size", "\(formatBytes(book.bytes)) (\(book.bytes) bytes)"),
                    ("sha256", book.sha256),
                    ("folder", book.folder ?? "-"),
                    ("tags", info.tags.isEmpty ? "-" : info.tags.joined(separator: ", ")),
                    ("added", shortDate(book.addedAt) + (book.addedBy.map { " by \($0)" } ?? "")),
                    ("opened", shortDate(book.openedAt)),
                    ("file", info.file ?? "not cached (fetched again from a source when needed)"),
                ]
                if let password = book.password {
                    lines.append(
                        (
                            "encrypted",
                            password == "local" ? "yes (each user keeps the password)" : "yes (password saved)"
                        ))
                }
                for (index, source) in info.sources.enumerated() {
                    lines.append((index == 0 ? "sources" : "", source))
                }
                if let memo = book.memo { lines.append(("memo", memo)) }
                lines += metadataLines(book)
                if let guide = try await library.guide(of: book.id ?? 0) {
                    if !guide.outline.isEmpty {
                        lines.append(("outline", "\(guide.outline.count) entries (margin toc \(book.id ?? 0))"))
                    }
                    if let labels = guide.labels, let first = labels.first, let last = labels.last {
                        lines.append(("printed", "pages numbered \(first) … \(last) (page labels)"))
                    }
                }
                for (key, value) in lines {
                    Console.out(padded(key, 10) + value)
                }
            }
        }
    }

    struct Recent: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "recent",
            abstract: "List the books opened most recently (shown, read, rendered, annotated)."
        )

        @Option(help: ArgumentHelp("At most N books.", valueName: "N"))
        var limit = 10

        @OptionGroup var global: GlobalOptions

        func validate() throws {
            guard limit >= 1 else { throw ValidationError("--limit must be at least 1") }
        }

        func run() async throws {
            let books = try await global.openLibrary().recent(limit: limit)
            try await global.show(books) {
                if books.isEmpty { return global.note("no book has been opened yet") }
                Console.table(
                    ["ID", "TITLE", "AUTHOR", "PAGES", "OPENED"],
                    books.map {
                        [
                            String($0.book.id ?? 0), Console.cell($0.book.title),
                            Console.cell($0.book.author, width: 24),
                            String($0.book.pages), shortDate($0.book.openedAt),
                        ]
                    })
            }
        }
    }

    struct PathCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "path",
            abstract: "Print the path of a book's cached PDF (fetched again if missing).",
            discussion: "Example: okular \"$(margin path 'attention is all')\""
        )

        @Argument(help: "The book.")
        var book: String

        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let library = try global.openLibrary()
            let selected = try await library.resolve(book)
            let path = try await library.ensureCached(selected)
            try await global.show(["path": path]) {
                Console.out(path)
            }
        }
    }
}

extension Margin {
    struct Fetch: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "fetch",
            abstract:
                "Make sure books' PDFs are in the cache, downloading missing ones (all books when none are given).",
            discussion: "An interrupted download resumes where it stopped. Example: margin cache clear && margin fetch"
        )

        @Argument(help: "The books.") var books: [String] = []
        @OptionGroup var limits: DownloadOptions
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let library = try global.openLibrary()
            let selected = try await books.isEmpty ? library.allBooks() : library.resolveAll(books)
            installInterruptHandler(global)
            var failures = 0
            var fetched = ItemReport<[String: String]>(global)
            for book in selected {
                do {
                    let path = try await library.ensureCached(
                        book, maxSize: limits.maxSize.bytes, timeout: limits.timeout,
                        progress: TerminalProgress.make(global))
                    fetched.add(["book": String(book.id ?? 0), "file": path]) {
                        Console.out("\(book.id ?? 0)  \(book.title): \(path)")
                    }
                } catch {
                    failures += 1
                    Console.error("error: \(error.localizedDescription)")
                }
            }
            try await fetched.finish()
            if failures > 0 { throw ExitCode(1) }
        }
    }
}

/// What a book is, as `show` and `meta` print it: the fields that have a value.
func metadataLines(_ book: Book) -> [(String, String)] {
    var lines = [(String, String)]()
    if let year = book.year { lines.append(("year", String(year))) }
    if let type = book.workType { lines.append(("type", type)) }
    if let lang = book.lang { lines.append(("language", lang)) }
    if let venue = book.venue { lines.append(("venue", venue)) }
    if let publisher = book.publisher { lines.append(("publisher", publisher)) }
    if let doi = book.doi { lines.append(("doi", doi)) }
    if let arxiv = book.arxiv { lines.append(("arxiv", arxiv)) }
    if let key = book.citationKey { lines.append(("cite as", key)) }
    return lines
}
