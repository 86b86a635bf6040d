import Foundation
import MarginCore
import Testing

@testable import MarginKit

/// The pieces of "what is this PDF": identifiers, names, keys, chapters, TeX escapes, titles.
@Suite struct MetadataParsingTests {
    @Test(arguments: [
        ("See https://doi.org/10.1145/3580305.3599901.", "10.1145/3580305.3599901"),
        ("DOI: 10.1000/xyz.123, and more", "10.1000/xyz.123"),
        (
            "(doi:10.1002/(SICI)1097-4571(199806)49:8<693::AID-ASI4>3.0.CO;2-0)",
            "10.1002/(SICI)1097-4571(199806)49:8<693::AID-ASI4>3.0.CO;2-0"
        ),
        ("[10.5555/abc]", "10.5555/abc"),
    ])
    func doisAreFoundInText(text: String, doi: String) {
        #expect(Identifiers.doi(in: text) == doi)
    }

    @Test(arguments: ["10.12/short-registrant", "doi:", "11.1000/xyz", "10.1000/", "no identifier here", "10.1000 /x"])
    func malformedDOIsAreNotDOIs(text: String) {
        #expect(Identifiers.parseDOI(text) == nil)
        #expect(Identifiers.doi(in: text) == nil || text.contains("10.1000/x"))
    }

    @Test func typedDOIsAndArxivIds() {
        #expect(Identifiers.parseDOI("https://doi.org/10.1145/3580305.3599901") == "10.1145/3580305.3599901")
        #expect(Identifiers.parseDOI("doi: 10.1000/xyz.123") == "10.1000/xyz.123")
        #expect(Identifiers.parseDOI("https://dx.doi.org/10.1000%2Fxyz") == "10.1000/xyz")
        #expect(Identifiers.parseArxiv("arXiv:2305.03393v2") == "2305.03393v2")
        #expect(Identifiers.parseArxiv("hep-th/9901001") == "hep-th/9901001")
        #expect(Identifiers.parseArxiv("math.GT/0309136v1") == "math.GT/0309136v1")
        #expect(Identifiers.parseArxiv("https://arxiv.org/pdf/1706.03762v7.pdf") == "1706.03762v7")
        #expect(Identifiers.arxiv(inURL: "https://arxiv.org/abs/2305.03393") == "2305.03393")
        #expect(Identifiers.arxiv(inURL: "https://example.org/abs/2305.03393") == nil)
        #expect(Identifiers.doi(inURL: "https://doi.org/10.1000/xyz.123") == "10.1000/xyz.123")
        for bad in ["2313.03393", "23.03393", "arXiv:", "1706.037", "hep-th/99010"] {
            #expect(Identifiers.parseArxiv(bad) == nil, "\(bad)")
        }
        // In text, only what says it is one: a bare number is not an arXiv id.
        #expect(Identifiers.arxiv(in: "version 2305.03393 of the table") == nil)
        #expect(Identifiers.arxiv(in: "arXiv:2305.03393v2 [cs.DL] 5 May 2023") == "2305.03393v2")
        #expect(Identifiers.year(ofArxiv: "2305.03393v2") == 2023)
        #expect(Identifiers.year(ofArxiv: "hep-th/9901001") == 1999)
        #expect(Identifiers.copyrightYear(in: "© 2021 The Authors") == 2021)
        #expect(Identifiers.copyrightYear(in: "Copyright 2019 Example College") == 2019)
        #expect(Identifiers.copyrightYear(in: "Published 2019") == nil)
    }

    @Test func yearsPrintedWhereReadersLookForThem() {
        let printed: [(String, Int)] = [
            ("A Title\nReceived 12 March 2017; accepted 3 May 2017", 2017),
            ("Title\nAuthors\n© 2015 Elsevier Ltd. All rights reserved.", 2015),
            ("Journal of Things, Vol. 12, No. 3, 2011, pp. 1-10", 2011),
            ("CHI 2019, May 4-9, 2019, Glasgow, Scotland UK\nhttps://doi.org/10.1145/3290605.3300233", 2019),
            ("arXiv:2305.03393v2 [cs.DL] 5 May 2023", 2023),
            ("Draft of 2021-06-30", 2021),
            ("In: Proceedings of the 3rd Workshop on Reading Tools, pp. 11-18, 2019", 2019),
            ("2008 IEEE Symposium on Security and Privacy", 2008),
        ]
        for (page, year) in printed {
            #expect(Identifiers.printedYear(in: page, latest: 2026) == year, "\(page)")
        }
        // Years in a title, a DOI's digits, a table, a year yet to come: not a date line.
        for page in [
            "Trends in 2020s Computing\nAnn Lee", "doi:10.1145/2019.5555", "Table 3: 1999 2000 2001",
            "Proceedings of the Workshop, 2031",
        ] {
            #expect(Identifiers.printedYear(in: page, latest: 2026) == nil, "\(page)")
        }
    }

    @Test func placeholderTitles() {
        for title in [
            "2305.03393", "2305.03393v2", "arXiv:2305.03393", "draft3.docx", "10.1000/xyz", "paper.pdf", "10811.exe",
        ] {
            #expect(Identifiers.isIdentifierTitle(title), "\(title)")
        }
        for title in ["Attention Is All You Need", "A/B Testing at Scale", "Deep Learning"] {
            #expect(!Identifiers.isIdentifierTitle(title), "\(title)")
        }
        #expect(MetadataDetector.usableTitle("Microsoft Word - draft3.docx") == nil)
        #expect(MetadataDetector.usableTitle("Untitled") == nil)
        #expect(MetadataDetector.usableTitle("On Margins") == "On Margins")
        #expect(MetadataDetector.usableAuthor("jsmith") == nil)
        #expect(MetadataDetector.usableAuthor("Jane Smith") == "Jane Smith")
    }

    @Test func authorListsAndCitationKeys() {
        #expect(
            AuthorList.parse("José Müller, Ada Lovelace and Zoë Ng").map(\.family) == ["Müller", "Lovelace", "Ng"])
        #expect(AuthorList.parse("Lovelace, Ada") == [PersonName(given: "Ada", family: "Lovelace")])
        #expect(
            AuthorList.parse("Smith, Ann; van der Berg, Jo")
                == [PersonName(given: "Ann", family: "Smith"), PersonName(given: "Jo", family: "van der Berg")])
        #expect(
            AuthorList.parse("Martin Luther King Jr. & Ludwig van Beethoven")
                == [
                    PersonName(given: "Martin Luther", family: "King", suffix: "Jr."),
                    PersonName(given: "Ludwig", family: "van Beethoven"),
                ])
        #expect(
            CitationKey.base(author: "José Müller, Ada Lovelace", year: 2023, title: "Margins That Last")
                == "muller2023margins")
        #expect(CitationKey.base(author: nil, year: nil, title: "The Art of War") == "anonart")
        #expect(CitationKey.base(author: "Ødegård, Åse", year: 1999, title: "Ørsted's ßtraße") == "odegard1999orsted")
        #expect(CitationKey.first("x2020y", notIn: []) == "x2020y")
        #expect(CitationKey.first("x2020y", notIn: ["x2020y", "x2020ya"]) == "x2020yb")
        let taken = Set(["k"] + (0..<26).map { "k" + String(UnicodeScalar(UInt8(97 + $0))) })
        #expect(CitationKey.first("k", notIn: taken) == "kaa")
    }

    @Test func chaptersAndLabels() {
        let guide = BookGuide(
            bookId: 1, labels: ["i", "ii", "1", "2", "3", "4", "A-1"],
            outline: [
                OutlineItem(title: "Preface", page: 1, level: 1), OutlineItem(title: "1 Intro", page: 3, level: 1),
                OutlineItem(title: "1.1 Why", page: 3, level: 2), OutlineItem(title: "1.2 How", page: 4, level: 2),
                OutlineItem(title: "Nowhere", page: nil, level: 2), OutlineItem(title: "2 Method", page: 5, level: 1),
                OutlineItem(title: "Appendix", page: 7, level: 1),
            ])
        #expect(
            (1...7).map { guide.chapter(of: $0) } == [
                "Preface", "Preface", "1.1 Why", "1.2 How", "2 Method", "2 Method", "Appendix",
            ])
        #expect((1...7).map { guide.label(of: $0) } == ["i", "ii", "1", "2", "3", "4", "A-1"])
        #expect(guide.label(of: 8) == nil && guide.chapter(of: nil) == nil)
        // Labels that are the page numbers say nothing; an outline starting late leaves the
        // pages before it without a chapter.
        let plain = BookGuide(
            bookId: 1, labels: ["1", "2", "3"], outline: [OutlineItem(title: "Two", page: 2, level: 1)])
        #expect(plain.labels == nil && plain.label(of: 2) == nil)
        #expect(plain.chapter(of: 1) == nil && plain.chapter(of: 3) == "Two")
    }

    @Test func texEscapes() {
        #expect(
            Citations.texEscape("50% & $x_1$ #1 {a} ~ ^ \\")
                == "50\\% \\& \\$x\\_1\\$ \\#1 \\{a\\} {\\textasciitilde} {\\textasciicircum} {\\textbackslash}")
        #expect(
            Citations.texEscape("Müller, José, Zoë, Çelik, Dvořák, Łukasz, Straße, Ødegård, naïve")
                == "M{\\\"u}ller, Jos{\\'e}, Zo{\\\"e}, {\\c{C}}elik, Dvo{\\v{r}}{\\'a}k, {\\L}ukasz, Stra{\\ss}e, {\\O}deg{\\aa}rd, na{\\\"\\i}ve"
        )
        #expect(Citations.texEscape("東京 α") == "東京 α", "what TeX accents can't say stays UTF-8")
    }

    @Test func titlesAndAuthorsFromAFirstPage() {
        func line(_ text: String, _ size: Double, _ top: Double) -> TextLine {
            TextLine(text: text, fontSize: size, top: top, bottom: top + size, left: 72)
        }
        let body = (0..<12).map {
            line("Body text that runs on and on across the page, line \($0).", 10, 300 + Double($0) * 13)
        }
        let page =
            [
                line("Journal of Examples, vol. 3", 9, 40), line("A Title Set Large", 18, 90),
                line("Across Two Lines", 18, 111), line("Ann Smith¹, Bo Jones² and Chen Wu*", 11, 140),
                line("¹University of Examples", 9, 155), line("Abstract", 10, 180),
            ] + body
        let guess = TitleGuess.title(in: page, pageHeight: 792)
        #expect(guess?.title == "A Title Set Large Across Two Lines")
        #expect(guess?.authors == "Ann Smith, Bo Jones, Chen Wu")
        // All one size: no title to tell apart.
        #expect(TitleGuess.title(in: body, pageHeight: 792) == nil)
        // A large line low on the page is not a title.
        #expect(TitleGuess.title(in: body + [line("Figure 3", 20, 700)], pageHeight: 792) == nil)
        // Names and an affiliation on one line: the names.
        let lab = [line("A Title Set Large", 18, 90), line("Andrew Baumann, Microsoft Research", 11, 120)] + body
        #expect(TitleGuess.title(in: lab, pageHeight: 792)?.authors == "Andrew Baumann")
        #expect(TitleGuess.joinLines(["Hyphen-", "ated words", "join"]) == "Hyphenated words join")
    }

    @Test func junkIsNeverATitleAndCoversHaveTheirs() {
        func line(_ text: String, _ size: Double, _ top: Double, left: Double = 72) -> TextLine {
            TextLine(text: text, fontSize: size, top: top, bottom: top + size, left: left)
        }
        let body = (0..<12).map {
            line("Body text that runs on and on across the page, line \($0).", 10, 300 + Double($0) * 13)
        }
        // Headings and labels set large are not a work's title.
        for junk in [
            "1 Your Chapter", "2.3 Results", "Contents", "Table of Contents", "Title", "Abstract", "Chapter 4 Methods",
            String(repeating: "12.5  3,400  17 % ", count: 12),
        ] {
            #expect(TitleGuess.title(in: [line(junk, 18, 90)] + body, pageHeight: 792) == nil, "\(junk)")
        }
        // A cover: the title in the largest type, a subtitle smaller, a version line.
        let cover = [
            line("Think Stats", 37, 300), line("Exploratory Data Analysis in Python", 26, 345),
            line("Version 2.0.25", 18, 430),
        ]
        #expect(
            TitleGuess.title(in: cover, pageHeight: 1188)?.title == "Think Stats: Exploratory Data Analysis in Python")
        // A title page in one type size: its first line, standing apart, and the name below it.
        let thesis = [
            line("Investigación informática forense basada en Emacs", 10, 105, left: 213),
            line("José Luis Jerez Guerero", 10, 129, left: 268), line("Madrid, Julio 2015", 10, 153, left: 277),
            line("Tutor:", 10, 238), line("© 2015, José Luis Jerez Guerrero", 10, 634),
        ]
        let guess = TitleGuess.title(in: thesis, pageHeight: 842)
        #expect(guess?.title == "Investigación informática forense basada en Emacs")
        #expect(guess?.authors == "José Luis Jerez Guerero" && guess?.strong == false)
        // A running head's volume and issue glued to the title; ligatures; a footnote mark.
        #expect(TitleGuess.cleanPageTitle("29,2Shift work in nurses") == "Shift work in nurses")
        #expect(TitleGuess.cleanPageTitle("Di\u{FB00}erential Privacy*") == "Differential Privacy")
        #expect(TitleGuess.cleanPageTitle("2019 Annual Review") == "2019 Annual Review")
        // Names with societies' grades; names side by side; places are not people.
        #expect(
            TitleGuess.authors(
                in: "Jordi Soria-Comas, Josep Domingo-Ferrer, Fellow, IEEE, and David Megías, Member, IEEE")?
                .people.map(\.displayName) == ["Jordi Soria-Comas", "Josep Domingo-Ferrer", "David Megías"])
        #expect(
            TitleGuess.authors(in: "Ann B. Smith Bo Jones Chen Wu")?.people.map(\.displayName)
                == ["Ann B. Smith", "Bo Jones", "Chen Wu"])
        #expect(TitleGuess.authors(in: "Class A, Claim ID") == nil)
        #expect(TitleGuess.authors(in: "1309 S. Mary Avenue") == nil)
        #expect(TitleGuess.authors(in: "Name: Anil DuttFather's") == nil)
    }

    @Test func metadataAuthorsThatAreNotPeople() {
        for login in [
            "Txus", "office-2007", "jsmith", "Administrator", "(With Provisional Estimates from 2011-12)",
            "Mishra, Anshita [JRDUS NON-J&J]", "ann@example.org",
        ] {
            #expect(MetadataDetector.usableAuthor(login) == nil, "\(login)")
        }
        #expect(MetadataDetector.usableAuthor("Jennifer Ginn") == "Jennifer Ginn")
        #expect(MetadataDetector.usableAuthor("Lovelace, Ada") == "Lovelace, Ada")
    }

    @Test func xmpFields() {
        let xmp = XMP(
            """
            <rdf:Description prism:doi="10.1000/attr" xmlns:dc="http://purl.org/dc/elements/1.1/">
            <dc:title><rdf:Alt><rdf:li xml:lang="x-default">A &amp; B &#233;t&#xE9;</rdf:li></rdf:Alt></dc:title>
            <dc:creator><rdf:Seq><rdf:li>Ann Smith</rdf:li><rdf:li>Bo Jones</rdf:li></rdf:Seq></dc:creator>
            <dc:date><rdf:Seq><rdf:li>2020-05-01</rdf:li></rdf:Seq></dc:date>
            </rdf:Description>
            """)
        #expect(xmp.title == "A & B été")
        #expect(xmp.creators == "Ann Smith, Bo Jones")
        #expect(xmp.doi == "10.1000/attr" && xmp.year == 2020)
        // Read by libxml2, strictly: a packet with a DTD (entities) or that is not XML gives nothing.
        let hostile = XMP(
            "<!DOCTYPE x [<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b \"&a;&a;&a;&a;&a;\">]>"
                + "<rdf:Description><dc:title>&b;</dc:title></rdf:Description>")
        #expect(hostile.title == nil)
        #expect(XMP("<dc:title>unclosed").title == nil)
    }
}
