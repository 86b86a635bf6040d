import MarginCore
import Testing

/// A book's language told from its text, for the languages margin stems.
@Suite struct LanguageTests {
    @Test(arguments: [
        (
            "en",
            "The results of this study show that the method is robust, and it can be used for many problems which "
                + "have not been solved before. We think that this is an important step for the field."
        ),
        (
            "de",
            "Die Ergebnisse dieser Arbeit zeigen, dass die Methode robust ist und auch für viele Probleme verwendet "
                + "werden kann, die bisher nicht gelöst sind. Wir glauben, dass dies ein wichtiger Schritt ist."
        ),
        (
            "fr",
            "Les résultats de cette étude montrent que la méthode est robuste et qu'elle peut être utilisée pour "
                + "des problèmes qui ne sont pas encore résolus. Nous pensons que c'est une étape importante pour le domaine."
        ),
        (
            "es",
            "Los resultados de este estudio muestran que el método es robusto y que se puede usar para muchos "
                + "problemas que no han sido resueltos. Creemos que es un paso importante para el campo, pero hay mucho por hacer."
        ),
        (
            "it",
            "I risultati di questo studio mostrano che il metodo è robusto e che può essere usato per molti problemi "
                + "che non sono ancora stati risolti. Pensiamo che sia un passo importante per il campo, ma anche che ci sia molto da fare."
        ),
        (
            "pt",
            "Os resultados deste estudo mostram que o método é robusto e que pode ser usado para muitos problemas "
                + "que ainda não foram resolvidos. Acreditamos que é um passo importante para a área, mas há muito por fazer com isso."
        ),
        (
            "nl",
            "De resultaten van deze studie laten zien dat de methode robuust is en dat zij ook voor veel problemen "
                + "gebruikt kan worden die nog niet zijn opgelost. Wij denken dat het een belangrijke stap is voor het veld."
        ),
        (
            "sv",
            "Resultaten av denna studie visar att metoden är robust och att den kan användas för många problem som "
                + "inte har lösts tidigare. Vi tror att det är ett viktigt steg för området, men det finns mycket kvar att göra."
        ),
        (
            "ru",
            "Результаты этого исследования показывают, что метод надёжен и что его можно использовать для многих "
                + "задач, которые ещё не были решены. Мы думаем, что это важный шаг для этой области, но работы ещё много."
        ),
        ("ja", "これは日本語の文章です。検索のための文字列を含みます。"),
        ("zh", "这是一个中文句子，用于测试搜索功能。"),
    ])
    func eachLanguageIsToldFromItsText(_ expected: String, _ text: String) {
        #expect(Languages.detect([text]) == expected)
        #expect(Languages.known.contains(expected))
    }

    @Test func noLanguageIsToldFromTooLittle() {
        #expect(Languages.detect([]) == nil)
        #expect(Languages.detect(["Table 3: 12.5 41.2 7.7"]) == nil)
        #expect(Languages.detect(["the"]) == nil)
    }
}
