import ArgumentParser
import Foundation
import MarginCore
import MarginKit

extension BookSort: ExpressibleByArgument {}

extension Margin {
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List the books in the library.",
            discussion: """
                Examples:
                  margin list --folder papers --sort title
                  margin list --tag to-read --limit 20 --offset 20
                  margin list --json | jq '.[].title'
                """
        )

        @Option(help: ArgumentHelp("Only books in this folder or its subfolders.", valueName: "F"))
        var folder: String?

        @Option(help: ArgumentHelp("Only books with this tag.", valueName: "T"))
        var tag: String?

        @Option(help: "Order: added, title, author or opened (most recent first).")
        var sort: BookSort = .added

        @Option(help: ArgumentHelp("At most N books (0 for all, as search --limit).", valueName: "N"))
        var limit: Int?

        @Option(help: ArgumentHelp("Skip the first N books (for paging).", valueName: "N"))
        var offset: Int?

        @OptionGroup var global: GlobalOptions

        func validate() throws {
            if let limit, limit < 0 { throw ValidationError("--limit must be 0 or more") }
            if let offset, offset < 0 { throw ValidationError("--offset must be 0 or more") }
        }

        func run() async throws {
            let library = try global.openLibrary()
            let books = try await library.list(
                BookFilter(
                    folder: folder, tag: tag, sort: sort, limit: limit == 0 ? nil : limit, offset: offset,
                    files: global.json))
            try await global.show(books) {
                if books.isEmpty {
                    if folder != nil || tag != nil {
                        global.note("no books match")
                    } else if (offset ?? 0) > 0, case let total = try await library.list().count, total > 0 {
                        global.note(
                            "no books after the first \(offset ?? 0): the library has \(total) book\(total == 1 ? "" : "s")"
                        )
                    } else {
                        global.note("the library is empty; add a PDF with 'margin add URL|PATH'")
                    }
                    return
                }
                printBookTable(books)
            }
        }
    }
}

func printBookTable(_ books: [BookInfo]) {
    Console.table(
        ["ID", "TITLE", "AUTHOR", "PAGES", "FOLDER", "TAGS", "ADDED"],
        books.map { info in
            [
                String(info.book.id ?? 0), Console.cell(info.book.title), Console.cell(info.book.author, width: 24),
                String(info.book.pages), Console.cell(info.book.folder, width: 20),
                Console.cell(info.tags.isEmpty ? "-" : info.tags.joined(separator: ","), width: 24),
                shortDate(info.book.addedAt),
            ]
        })
}
