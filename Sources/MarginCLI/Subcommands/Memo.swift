import ArgumentParser
import Foundation
import MarginCore
import MarginKit

extension Margin {
    struct MemoCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "memo",
            abstract: "Write, list, edit and remove memos on books and pages.",
            subcommands: Margin.subcommands(of: MemoCommand.self)
        )

        struct Add: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "add", abstract: "Write a memo on a page, or on the whole book.",
                discussion: """
                    TEXT - reads the memo from stdin.

                    Examples:
                      margin memo add 3 --page 12 "Compare with chapter 2"
                      pbpaste | margin memo add 3 -
                    """
            )

            @Argument(help: "The book.") var book: String
            @Argument(help: "The memo, or - to read it from stdin.") var text: String
            @Option(help: ArgumentHelp("The page (1-based); without it the memo is on the whole book.", valueName: "N"))
            var page: Int?
            @Flag var sharing: Sharing?
            @OptionGroup var global: GlobalOptions

            func run() async throws {
                let library = try global.openLibrary()
                let body = text == "-" ? readStandardInput() : text
                let shown = try await library.addMemoShown(
                    library.resolve(book), page: page, text: body, shared: sharing?.isShared ?? false)
                let memo = shown.annotation
                try await global.show(shown) {
                    Console.out("memo \(memo.id ?? 0)" + (memo.page.map { " on page \($0)" } ?? " on the book"))
                }
            }
        }

        struct List: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "list", abstract: "List memos (of one book, or all)."
            )

            @Argument(help: "The book (all books when omitted).") var book: String?
            @OptionGroup var global: GlobalOptions

            func run() async throws {
                let (memos, titles, library) = try await annotationListing(global, book) { try await $0.memos(of: $1) }
                try await global.show(try await library.views(memos, titles: titles)) {
                    if memos.isEmpty { return global.note("no memos") }
                    annotationTable(
                        ["ID", "BOOK", "PAGE", "MEMO"], memos
                    ) {
                        [
                            String($0.id ?? 0), Console.cell(titles[$0.bookId], width: 32),
                            $0.page.map(String.init) ?? "-", Console.cell($0.text, width: 60),
                        ]
                    }
                }
            }
        }

        struct Edit: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "edit", abstract: "Replace a memo's text (- reads stdin), or share it."
            )

            @Argument(help: "The memo's id.") var id: Int64
            @Argument(help: "The new text, or - to read it from stdin.") var text: String?
            @Flag var sharing: Sharing?
            @OptionGroup var global: GlobalOptions

            func validate() throws {
                if text == nil && sharing == nil {
                    throw ValidationError("nothing to change: give the new text, --shared or --private")
                }
            }

            func run() async throws {
                let library = try global.openLibrary()
                let memo = try await library.editMemo(
                    id: id, text: text == "-" ? readStandardInput() : text, shared: sharing?.isShared)
                try await global.show(try await library.view(memo)) {
                    Console.out("updated memo \(id)")
                }
            }
        }

        struct Remove: AsyncParsableCommand {
            static let configuration = CommandConfiguration(commandName: "rm", abstract: "Remove a memo.")

            @Argument(help: "The memo's id.") var id: Int64
            @OptionGroup var global: GlobalOptions

            func run() async throws {
                let library = try global.openLibrary()
                let memo = try await library.removeMemo(id: id)
                try await global.show(try await library.view(memo)) {
                    Console.out("removed memo \(id)")
                }
            }
        }
    }
}

/// All of stdin as text, without a final newline.
func readStandardInput() -> String {
    let data = FileHandle.standardInput.readDataToEndOfFile()
    var text = String(decoding: data, as: UTF8.self)
    while text.hasSuffix("\n") { text.removeLast() }
    return text
}
