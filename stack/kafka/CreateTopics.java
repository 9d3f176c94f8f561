import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.config.ConfigResource;

/**
 * Creates the topics listed in topics.conf that do not exist yet, and brings the retention (time
 * and bytes), cleanup policy and segment time of those that do to what the file says
 * (idempotent). Run by stack/up.sh as a single-file program:
 * java -cp 'kafka jars' CreateTopics.java BOOTSTRAP FILE
 */
public class CreateTopics {
  public static void main(String[] args) throws Exception {
    Properties p = new Properties();
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
    p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "60000");
    try (Admin admin = Admin.create(p)) {
      Set<String> existing = admin.listTopics().names().get();
      List<NewTopic> wanted = new ArrayList<>();
      Map<String, Map<String, String>> configs = new HashMap<>();
      for (String line : Files.readAllLines(Path.of(args[1]))) {
        String t = line.strip();
        if (t.isEmpty() || t.startsWith("#")) {
          continue;
        }
        String[] f = t.split("\\s+");
        Map<String, String> c = Map.of("retention.ms", f[2], "retention.bytes", f[3], "cleanup.policy", f[4], "segment.ms", f[5]);
        if (existing.contains(f[0])) {
          configs.put(f[0], c);
        } else {
          wanted.add(new NewTopic(f[0], Integer.parseInt(f[1]), (short) 1).configs(c));
        }
      }
      if (!wanted.isEmpty()) {
        admin.createTopics(wanted).all().get();
      }
      int altered = alter(admin, configs);
      System.out.println("topics: created " + wanted.size() + ", " + existing.size() + " existed, " + altered + " reconfigured");
    }
  }

  /** Sets the listed configs of existing topics where they differ; returns how many topics changed. */
  static int alter(Admin admin, Map<String, Map<String, String>> configs) throws Exception {
    List<ConfigResource> res = new ArrayList<>();
    for (String topic : configs.keySet()) {
      res.add(new ConfigResource(ConfigResource.Type.TOPIC, topic));
    }
    Map<ConfigResource, Config> current = admin.describeConfigs(res).all().get();
    Map<ConfigResource, Collection<AlterConfigOp>> ops = new HashMap<>();
    for (ConfigResource r : res) {
      List<AlterConfigOp> change = new ArrayList<>();
      for (Map.Entry<String, String> e : configs.get(r.name()).entrySet()) {
        ConfigEntry now = current.get(r).get(e.getKey());
        if (now == null || !e.getValue().equals(now.value())) {
          change.add(new AlterConfigOp(new ConfigEntry(e.getKey(), e.getValue()), AlterConfigOp.OpType.SET));
        }
      }
      if (!change.isEmpty()) {
        ops.put(r, change);
      }
    }
    if (!ops.isEmpty()) {
      admin.incrementalAlterConfigs(ops).all().get();
    }
    return ops.size();
  }
}
