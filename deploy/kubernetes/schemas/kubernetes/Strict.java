import com.google.gson.JsonElement;
import com.google.gson.JsonParser;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.reflect.InvocationTargetException;

/**
 * Reads Kubernetes objects as JSON, one a line, and prints one line for each: "ok", or why the API's own
 * model refuses it (a field its kind does not define, a required one missing, a value of the wrong shape).
 */
public class Strict {
  public static void main(String[] args) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
    for (String line = in.readLine(); line != null; line = in.readLine()) {
      JsonElement object = JsonParser.parseString(line);
      String apiVersion = object.getAsJsonObject().get("apiVersion").getAsString();
      String kind = object.getAsJsonObject().get("kind").getAsString();
      String version = apiVersion.substring(apiVersion.lastIndexOf('/') + 1);
      String model = "io.kubernetes.client.openapi.models."
          + Character.toUpperCase(version.charAt(0)) + version.substring(1) + kind;
      try {
        Class.forName(model).getMethod("validateJsonElement", JsonElement.class).invoke(null, object);
        System.out.println("ok");
      } catch (ClassNotFoundException e) {
        System.out.println("no model " + model + " for " + apiVersion + " " + kind);
      } catch (InvocationTargetException e) {
        System.out.println(String.valueOf(e.getCause().getMessage()).replace('\n', ' '));
      }
    }
  }
}
