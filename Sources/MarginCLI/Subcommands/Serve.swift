import ArgumentParser
import Foundation
import MarginCore
import MarginKit

extension Margin {
    struct Serve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "serve",
            abstract: "Read, search and highlight the library in a browser.",
            discussion: """
                Serves a reader over the same library the CLI uses: / (the library and search), \
                /books/ID (a book and its annotations), /books/ID/pages/N (the reader: select text \
                and press h to highlight, n for a note, b to bookmark, arrows to turn pages, ? for \
                the keys), and the JSON API under /api (the CLI's --json shapes; see CLI.md).

                Loopback only by default. Any other address needs a token (--token or \
                $MARGIN_TOKEN): every request without it gets 401; a browser signs in once with \
                /login?token=TOKEN. Ctrl-C (or SIGTERM) stops the server after the requests in \
                flight are answered.

                Examples:
                  margin serve --open
                  margin serve --port 9000
                  MARGIN_TOKEN=$(openssl rand -hex 16) margin serve --host 0.0.0.0
                """
        ).ofMargin

        @Option(help: ArgumentHelp("Listen on this address.", valueName: "HOST"))
        var host = "127.0.0.1"

        @Option(help: ArgumentHelp("Listen on this port (0 for any free one).", valueName: "PORT"))
        var port = 8484

        @Option(help: ArgumentHelp("Require this token of every request (also $MARGIN_TOKEN).", valueName: "TOKEN"))
        var token: String?

        @Flag(help: "Open the reader in the default browser.")
        var open = false

        @OptionGroup var global: GlobalOptions

        func validate() throws {
            guard (0...65535).contains(port) else { throw ValidationError("--port must be 0…65535") }
            if let token, token.isEmpty { throw ValidationError("--token can't be empty") }
        }

        func run() async throws {
            let secret = token ?? ProcessInfo.processInfo.environment["MARGIN_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
            guard isLoopback(host) || secret != nil else {
                throw MarginError.invalidArgument(
                    "serving on \(host) lets other machines in: give a token (--token T or MARGIN_TOKEN) or serve on 127.0.0.1"
                )
            }
            guard let serve = Services.current.serve else { throw NeedsFullExecutable() }
            let library = try global.openLibrary()
            let shown = host.contains(":") ? "[\(host)]" : host
            let quiet = global.quiet
            let openBrowser = open
            try await serve(library, secret, host, port) { bound in
                let address = "http://\(shown == "0.0.0.0" ? "127.0.0.1" : shown):\(bound)/"
                if !quiet {
                    Console.error(
                        "serving \(library.database.path ?? library.paths.database) at \(address) (Ctrl-C stops)")
                }
                if openBrowser { launchBrowser(secret.map { "\(address)login?token=\($0)" } ?? address) }
            }
            if !quiet { Console.error("stopped") }
        }
    }
}

/// Whether an address is this machine only.
private func isLoopback(_ host: String) -> Bool {
    host == "localhost" || host == "::1" || host.hasPrefix("127.")
}

/// Opens `url` in the desktop's browser, if there is one; says so when there isn't.
private func launchBrowser(_ url: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["xdg-open", url]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    if (try? process.run()) == nil { Console.error("note: could not open a browser; open \(url)") }
}
