// SPDX-License-Identifier: Apache-2.0
package dev.mallard.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.stream.IntStream;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.NodeList;

/** mallard-bom names every library module of the build, at the build's version. */
class BomTest {
    private static final Path ROOT = Path.of("..");

    private static Document read(Path pom) throws Exception {
        return DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(pom.toFile());
    }

    private static List<String> texts(Document document, String tag) {
        NodeList nodes = document.getElementsByTagName(tag);
        return IntStream.range(0, nodes.getLength()).mapToObj(i -> nodes.item(i).getTextContent().strip()).toList();
    }

    @Test
    void theBomManagesEveryModuleButTheBenchAndItselfAtTheBuildsVersion() throws Exception {
        Document parent = read(ROOT.resolve("pom.xml"));
        Document bom = read(ROOT.resolve("mallard-bom/pom.xml"));
        List<String> libraries = texts(parent, "module").stream().filter(m -> !m.equals("mallard-bom") && !m.equals("mallard-bench")).toList();
        List<String> managed = texts(bom, "artifactId").stream().filter(a -> !a.equals("mallard-bom")).toList();
        assertThat(managed).containsExactlyInAnyOrderElementsOf(libraries);
        String version = parent.getDocumentElement().getElementsByTagName("version").item(0).getTextContent();
        assertThat(texts(bom, "mallard.version")).containsExactly(version);
        assertThat(bom.getDocumentElement().getElementsByTagName("version").item(0).getTextContent()).isEqualTo(version);
    }
}
